"""The agent's toolbox in the editor's transcript: its plan as a Markdown checklist, the files a
tool call changed as ```diff blocks, and the MCP servers' state for `openvaala.mcp`. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from openvaala_server.protocol.display import mcp_server_state
from openvaala_server.protocol.json_types import JsonObject

if TYPE_CHECKING:
    from openvaala_server.protocol import payloads

_STEP = {"completed": "- [x] {}", "in_progress": "- [ ] **{}** _(in progress)_"}


def plan_lines(plan: JsonObject | None) -> list[str]:
    """`## Plan 1/3`, the explanation, one checklist line per step (empty: no plan)."""
    listed = (plan or {}).get("steps")
    steps = [s for s in listed if isinstance(s, dict)] if isinstance(listed, list) else []
    if not steps or plan is None:
        return []
    done = sum(1 for s in steps if s.get("status") == "completed")
    lines = [f"## Plan {done}/{len(steps)}", ""]
    explanation = plan.get("explanation")
    if isinstance(explanation, str) and explanation:
        lines += [f"_{' '.join(explanation.split())}_", ""]
    for step in steps:
        text = " ".join(str(step.get("step") or "").split())
        lines.append(_STEP.get(str(step.get("status")), "- [ ] {}").format(text))
    return [*lines, ""]


def changes_of(item: Mapping[str, object]) -> list[JsonObject]:
    """The `changes` of a tool_result (docs/protocol.md, FileChange), or none."""
    changes = item.get("changes")
    return [c for c in changes if isinstance(c, dict)] if isinstance(changes, list) else []


def change_heading(change: JsonObject) -> str:
    kind = str(change.get("kind") or "update")
    path = str(change.get("path") or "")
    if kind == "move" and change.get("movePath"):
        path = f"{path} → {change['movePath']}"
    word = {"add": "added", "update": "changed", "delete": "deleted", "move": "moved"}.get(kind)
    return f"_{word or kind}_ `{path}`"


def server_line(server: Mapping[str, object]) -> str:
    return f"{server.get('name') or '?'}: {mcp_server_state(server)}"


def mcp_report(servers: Sequence[payloads.McpServerState]) -> str:
    if not servers:
        return "No MCP servers are configured ([mcp_servers.NAME] in config.toml)."
    return "MCP servers: " + "; ".join(server_line(s) for s in servers)
