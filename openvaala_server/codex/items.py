"""OpenVaala items as Codex thread items (pure; docs/codex.md "Items").

A tool call and its result are one Codex item, named by the call's item id: `shell` is a
`commandExecution`, `apply_patch`/`edit_file`/`write_file` a `fileChange`, an MCP tool
(`mcp__SERVER__TOOL`) an `mcpToolCall`, the collaboration tools a `collabAgentToolCall`,
`update_plan` a `plan`, any other tool a `dynamicToolCall`. A `summary` is a
`contextCompaction`; a `notice` has no Codex item."""

from __future__ import annotations

import re
import shlex
from typing import Final

from openvaala_server.codex import proposed, wire
from openvaala_server.codex.ids import thread_id
from openvaala_server.codex.rpc import decode_object
from openvaala_server.domain import denials, tool_names
from openvaala_server.domain.records import ItemOfKind, ToolCallItem, ToolResultItem
from openvaala_server.protocol.json_types import JsonObject, JsonValue

FILE_TOOLS: Final = frozenset({tool_names.APPLY_PATCH, tool_names.EDIT_FILE, tool_names.WRITE_FILE})
COLLAB_TOOLS: Final[dict[str, wire.CollabAgentTool]] = {
    "spawn_agent": "spawnAgent",
    "send_message": "sendMessage",
    "wait": "wait",
    "interrupt_agent": "interruptAgent",
    "inspect_agent": "listAgents",
    "list_agents": "listAgents",
    "close_agent": "closeAgent",
}
# The line a shell result ends its output with (tools/shell.py); notes may follow it (the
# sandbox's, a limit hit), so the last such line is the command's.
_EXIT_CODE = re.compile(r"(?:^|\n)exit code: (-?\d+)(?: \(killed by [^)\n]*\))?(?=\n|$)")
_PLAN_MARK: Final = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


def message_item(item: ItemOfKind) -> wire.ThreadItem | None:
    """A user message, an answer, reasoning or a summary; None for the other kinds."""
    if item["type"] == "user_message":
        content: list[wire.UserInput] = [
            {"type": "text", "text": item["text"], "text_elements": []}
        ]
        return {"type": "userMessage", "id": item["itemId"], "clientId": None, "content": content}
    if item["type"] == "agent_message":
        return {"type": "agentMessage", "id": item["itemId"], "text": item["text"], "phase": None}
    if item["type"] == "reasoning":
        summary = [item["text"]] if item["text"] else []
        return {"type": "reasoning", "id": item["itemId"], "summary": summary, "content": []}
    if item["type"] == "summary":
        return {"type": "contextCompaction", "id": item["itemId"]}
    return None


def shell_line(script: str) -> str:
    """A shell call's script as a Codex command line: `bash -c '<script>'`, how OpenVaala runs
    it (docs/security.md). Codex clients show such a line's script verbatim; a bare script they
    split into words and show re-quoted, a pipe as `'|'` (docs/codex.md "Approvals")."""
    return shlex.join(["bash", "-c", script])


def tool_item(
    call: ToolCallItem,
    result: ToolResultItem | None,
    cwd: str,
    *,
    declined: bool = False,
    read: proposed.Reader = proposed.no_files,
) -> wire.ThreadItem:
    """The Codex item of one tool call: in progress until its result, or `declined` (also
    when its result says the user's answer kept it from running: domain/denials.py)."""
    name, args, item_id = call["name"], call["arguments"], call["itemId"]
    failed = result is not None and result["isError"]
    output = result["output"] if result is not None else None
    declined = declined or (result is not None and denials.declined(result["output"], failed))
    if name == tool_names.SHELL:
        status: wire.ToolStatus = _status(result, declined)
        if declined:  # as Codex ends a declined command: it never ran, so no output, no exit
            output = None
        return {
            "type": "commandExecution",
            "id": item_id,
            "command": shell_line(str(args.get("command", ""))),
            "cwd": str(args.get("workdir") or cwd),
            "processId": None,
            "source": "agent",
            "status": status,
            "commandActions": [],
            "aggregatedOutput": output,
            "exitCode": _exit_code(output),
            "durationMs": None,
        }
    if name in FILE_TOOLS:
        changes: list[wire.FileUpdateChange] = [
            {
                "path": c["path"],
                "kind": _change_kind(c["kind"], c.get("movePath")),
                "diff": c["diff"],
            }
            for c in (result.get("changes", []) if result is not None else [])
        ]
        if not changes:  # not made yet (or not at all): what the call proposes
            changes = proposed.changes(name, args, read)
        return {
            "type": "fileChange",
            "id": item_id,
            "changes": changes,
            "status": _status(result, declined),
        }
    if name.startswith("mcp__") and name.count("__") >= 2:
        _, server, tool = name.split("__", 2)
        done = result is not None
        return {
            "type": "mcpToolCall",
            "id": item_id,
            "server": server,
            "tool": tool,
            "status": "inProgress"
            if not done
            else ("failed" if failed or declined else "completed"),
            "arguments": args,
            "result": {"content": [{"type": "text", "text": output}], "structuredContent": None}
            if done and not failed
            else None,
            "error": {"message": output} if failed and output is not None else None,
            "durationMs": None,
        }
    if name in COLLAB_TOOLS:
        return collab_item(call, result)
    if name == tool_names.UPDATE_PLAN:
        return {"type": "plan", "id": item_id, "text": plan_text(args)}
    return {
        "type": "dynamicToolCall",
        "id": item_id,
        "namespace": None,
        "tool": name,
        "arguments": args,
        "status": "inProgress" if result is None else ("failed" if failed else "completed"),
        "contentItems": [{"type": "inputText", "text": output}] if output is not None else None,
        "success": None if result is None else not failed,
        "durationMs": None,
    }


def collab_item(call: ToolCallItem, result: ToolResultItem | None) -> wire.CollabAgentToolCallItem:
    """A collaboration tool call; its receivers are the subagents it names (or started)."""
    args = call["arguments"]
    receivers = [a for a in _agent_ids(args) if a]
    parsed = decode_object(result["output"]) if result is not None else {}
    started = parsed.get("agent_id")
    if isinstance(started, str) and started not in receivers:
        receivers.append(started)
    failed = result is not None and result["isError"]
    task = args.get("task", args.get("message"))
    return {
        "type": "collabAgentToolCall",
        "id": call["itemId"],
        "tool": COLLAB_TOOLS[call["name"]],
        "status": "inProgress" if result is None else ("failed" if failed else "completed"),
        "senderThreadId": thread_id(call["sessionId"]),
        "receiverThreadIds": [thread_id(r) for r in receivers if _hex(r)],
        "prompt": task if isinstance(task, str) else None,
        "model": model if isinstance(model := parsed.get("model"), str) else None,
        "agentsStates": {},
    }


def plan_text(args: JsonObject) -> str:
    steps = args.get("plan")
    lines = []
    if isinstance(args.get("explanation"), str):
        lines.append(str(args["explanation"]))
    for step in steps if isinstance(steps, list) else []:
        if isinstance(step, dict):
            lines.append(f"{_PLAN_MARK.get(str(step.get('status')), '[ ]')} {step.get('step', '')}")
    return "\n".join(lines)


def plan_steps(plan: JsonObject) -> list[JsonObject]:
    """An OpenVaala Plan's steps as Codex `TurnPlanStep`s."""
    status = {"pending": "pending", "in_progress": "inProgress", "completed": "completed"}
    steps = plan.get("steps")
    return [
        {"step": str(s.get("step", "")), "status": status.get(str(s.get("status")), "pending")}
        for s in (steps if isinstance(steps, list) else [])
        if isinstance(s, dict)
    ]


def _status(result: ToolResultItem | None, declined: bool) -> wire.ToolStatus:
    if declined:
        return "declined"
    if result is None:
        return "inProgress"
    return "failed" if result["isError"] else "completed"


def _exit_code(output: str | None) -> int | None:
    matches = _EXIT_CODE.findall(output) if output else []
    return int(matches[-1]) if matches else None


def _change_kind(kind: str, move_path: str | None) -> wire.PatchChangeKind:
    if kind == "add":
        return {"type": "add"}
    if kind == "delete":
        return {"type": "delete"}
    return {"type": "update", "move_path": move_path if kind == "move" else None}


def _agent_ids(args: JsonObject) -> list[str]:
    ids: JsonValue = args.get("agent_ids", args.get("agent_id"))
    if isinstance(ids, str):
        return [ids]
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def _hex(value: str) -> bool:
    return len(value) == 32 and all(c in "0123456789abcdef" for c in value)
