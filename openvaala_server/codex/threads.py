"""OpenVaala conversations and sessions as Codex threads and turns (pure; docs/codex.md).

A conversation is a thread (its root session's history); each subagent session is a thread of
its own whose `parentThreadId` is its parent's thread. Items are grouped into turns by their
`turnId`; an item outside any turn (a manual compaction's summary) is a turn of its own."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Final

from openvaala_server import __version__, errors
from openvaala_server.codex import wire
from openvaala_server.codex.ids import thread_id
from openvaala_server.codex.items import message_item, tool_item
from openvaala_server.domain.records import ItemOfKind, ToolCallItem, ToolResultItem
from openvaala_server.protocol.json_types import JsonObject

MODEL_PROVIDER: Final = "openvaala"
# Codex's sandbox as reported: OpenVaala's own applies (docs/codex.md "Not supported").
SANDBOX: Final[JsonObject] = {"type": "externalSandbox", "networkAccess": "restricted"}
# Plan mode's sandbox as reported: OpenVaala's plan mode is read-only (docs/security.md).
READ_ONLY: Final[JsonObject] = {"type": "readOnly", "networkAccess": False}


def policies(permission_mode: object) -> tuple[str, JsonObject]:
    """The conversation's permission mode as Codex's approval and sandbox policies, so that a
    Codex client shows it (docs/codex.md "Per-turn overrides"; the inverse of
    overrides.policy_mode where Codex has a word for it): `plan` is a read-only sandbox, `ask`
    is `untrusted` (asks before every write), and `auto-edit` — the agent's configuration
    decides when to ask — is `on-request`, with OpenVaala's own sandbox."""
    if permission_mode == "plan":
        return "on-request", READ_ONLY
    if permission_mode == "ask":
        return "untrusted", SANDBOX
    return "on-request", SANDBOX


def seconds(timestamp: object) -> int:
    """An OpenVaala timestamp (ISO 8601 UTC) as Unix seconds; 0 when there is none."""
    if not isinstance(timestamp, str):
        return 0
    try:
        return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0


def thread_status(status: object, *, loaded: bool = True) -> wire.ThreadStatus:
    if not loaded:
        return {"type": "notLoaded"}
    if status == "running":
        return {"type": "active", "activeFlags": []}
    if status == "awaiting_approval":
        return {"type": "active", "activeFlags": ["waitingOnApproval"]}
    return {"type": "idle"}


def conversation_thread(
    info: Mapping[str, object], *, loaded: bool = True, as_id: str | None = None
) -> wire.Thread:
    """A conversation's thread, from a ConversationInfo or a ConversationSummary; `as_id` is
    the thread id the client knows a rewound copy by (docs/codex.md "Rewinding"), which shows
    it as the same thread, not as a fork."""
    cid = str(info["conversationId"])
    forked = info.get("forkedFrom")
    forked_id = forked.get("conversationId") if isinstance(forked, dict) else None
    title = str(info.get("title") or "")
    own_id = as_id or thread_id(cid)
    return {
        "id": own_id,
        "sessionId": own_id,
        "forkedFromId": thread_id(forked_id) if isinstance(forked_id, str) and not as_id else None,
        "parentThreadId": None,
        "preview": title,
        "ephemeral": False,
        "projectId": None,
        "modelProvider": MODEL_PROVIDER,
        "model": str(info["model"]) if info.get("model") else None,
        "createdAt": seconds(info.get("createdAt")),
        "updatedAt": seconds(info.get("updatedAt")),
        "status": thread_status(info.get("status"), loaded=loaded),
        "path": None,
        "cwd": str(info.get("cwd") or "/"),
        "cliVersion": f"openvaala {__version__}",
        # What Codex's own `codex app-server` reports for the threads it hosts (listing.py).
        "source": "vscode",
        "agentNickname": None,
        "agentRole": str(info["agent"]) if info.get("agent") else None,
        "name": title or None,
        "turns": [],
    }


def session_thread(
    info: Mapping[str, object], session: Mapping[str, object], *, as_id: str | None = None
) -> wire.Thread:
    """A subagent session's own thread, inside its conversation's (`as_id`: the
    conversation's thread id, as conversation_thread)."""
    thread = conversation_thread(info, as_id=as_id)
    parent = session.get("parentSessionId")
    parent_thread = thread_id(str(parent)) if isinstance(parent, str) else thread["id"]
    if parent == info.get("rootSessionId"):
        parent_thread = thread["id"]
    title = str(session.get("title") or "")
    thread.update(
        {
            "id": thread_id(str(session["sessionId"])),
            "forkedFromId": None,
            "parentThreadId": parent_thread,
            "preview": title,
            "model": str(session.get("model") or "") or None,
            "status": thread_status(session.get("status")),
            "agentNickname": title or None,
            "agentRole": str(session.get("agent") or "") or None,
            "name": title or None,
            "source": {
                "subAgent": {
                    "thread_spawn": {
                        "parent_thread_id": parent_thread,
                        "depth": int(str(session.get("depth") or 1)),
                        "agent_path": None,
                        "agent_nickname": title or None,
                        "agent_role": str(session.get("agent") or "") or None,
                    }
                }
            },
        }
    )
    return thread


def turns(items: Iterable[ItemOfKind], cwd: str, running: str | None = None) -> list[wire.Turn]:
    """Items, in order, as the turns they belong to; `running` is the turn still in progress."""
    grouped: dict[str, list[ItemOfKind]] = {}
    for item in items:
        grouped.setdefault(item.get("turnId") or item["itemId"], []).append(item)
    return [
        {
            "id": turn_id,
            "items": thread_items(group, cwd),
            "itemsView": "full",
            "status": "inProgress" if turn_id == running else _turn_status(group),
            "error": None,
            "startedAt": seconds(group[0].get("createdAt")),
            "completedAt": None if turn_id == running else seconds(group[-1].get("createdAt")),
            "durationMs": None,
        }
        for turn_id, group in grouped.items()
    ]


def thread_items(items: Iterable[ItemOfKind], cwd: str) -> list[wire.ThreadItem]:
    """Codex items of one turn: a tool call and its result make one item."""
    calls: dict[str, ToolCallItem] = {}
    results: dict[str, ToolResultItem] = {}
    ordered: list[ItemOfKind] = []
    for item in items:
        if item["type"] == "tool_call":
            calls[item["callId"]] = item
            ordered.append(item)
        elif item["type"] == "tool_result":
            results[item["callId"]] = item
        else:
            ordered.append(item)
    out: list[wire.ThreadItem] = []
    for item in ordered:
        if item["type"] == "tool_call":
            out.append(tool_item(item, results.get(item["callId"]), cwd))
        elif (mapped := message_item(item)) is not None:
            out.append(mapped)
    return out


def _turn_status(group: list[ItemOfKind]) -> wire.TurnStatus:
    for item in reversed(group):
        if item["type"] == "notice" and item.get("kind") == "interrupted":
            return "interrupted"
        if item["type"] == "notice" and item.get("kind") == "turn_failed":
            return "failed"
    return "completed"


# -- a conversation's snapshot (conversation/subscribe) -------------------------------------


def sessions(snapshot: JsonObject) -> list[JsonObject]:
    sessions = snapshot.get("sessions")
    return [s for s in (sessions if isinstance(sessions, list) else []) if isinstance(s, dict)]


def session(snapshot: JsonObject, sid: str | None) -> JsonObject | None:
    for session in sessions(snapshot):
        if session.get("sessionId") == sid or (
            sid is None and session.get("parentSessionId") is None
        ):
            return session
    return None


def find_turn(turns: list[wire.Turn], turn_id: object) -> wire.Turn:
    wanted = turn_id.replace("-", "") if isinstance(turn_id, str) else None
    for turn in turns:
        if turn["id"] == wanted:
            return turn
    raise errors.NotFound(f"no turn {turn_id!r} in this thread", param="turnId")


def last_item_id(turn: wire.Turn) -> str | None:
    return turn["items"][-1]["id"] if turn["items"] else None
