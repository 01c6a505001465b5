"""The protocol's shapes as the daemon fills them, for the fake client and the tests that script
its answers (tests/tui/fake_client.py): every field a real answer has, so a test cannot pass on a
shape the daemon never sends, and `conforms`, the daemon's own check (protocol/validate.py) of a
value against its TypedDict."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from openvaala_server.client import RpcError
from openvaala_server.domain import records
from openvaala_server.domain.ids import new_id
from openvaala_server.errors import InvalidParams, OpenVaalaError
from openvaala_server.protocol import payloads as p
from openvaala_server.protocol import validate
from openvaala_server.protocol.json_types import JsonObject

if TYPE_CHECKING:
    from openvaala_server.domain.records import Item

CWD = "/home/user/project"
CONFIG_PATH = "/home/user/.config/openvaala/config.toml"
ADDRESS = "127.0.0.1:4077"
WHEN = "2026-12-01T10:00:00Z"

Answer = Callable[[JsonObject], object]


class FakeMisuse(AssertionError):
    """The app or the test used the fake in a way the real daemon would not answer."""


def refusal(error: OpenVaalaError) -> RpcError:
    """What the client raises when the daemon refuses a request with `error` (errors.py: its
    code, kind and data, as the daemon puts them on the wire)."""
    return RpcError(cast("JsonObject", error.to_wire()))


# -- the protocol's shapes, every field the daemon fills --------------------------------------


def model(name: str, provider: str = "demo") -> p.ModelInfo:
    return {
        "name": name,
        "provider": provider,
        "model": name,
        "contextWindow": 100_000,
        "contextWindowSource": "config",
        "maxOutputTokens": 8_000,
    }


def agent(name: str = "default", model_name: str = "demo", **fields: Any) -> p.AgentInfo:
    info: p.AgentInfo = {
        "name": name,
        "description": "General assistant",
        "model": model_name,
        "default": name == "default",
        "sandbox": "workspace-write",
        "network": False,
        "approval": "on-request",
    }
    return cast("p.AgentInfo", {**info, **fields})


def usage(used: int = 0, window: int = 100_000) -> p.Usage:
    return {
        "used": used,
        "contextWindow": window,
        "threshold": window * 8 // 10,
        "maxOutputTokens": 8_000,
        "source": "estimated",
        "autoCompact": True,
        "compaction": {"calls": 0, "inputTokens": 0, "outputTokens": 0},
    }


def conversation(cid: str, root: str, cwd: str = CWD, **fields: Any) -> p.ConversationInfo:
    info: p.ConversationInfo = {
        "conversationId": cid,
        "title": "New conversation",
        "cwd": cwd,
        "agent": "default",
        "model": "demo",
        "createdAt": WHEN,
        "updatedAt": WHEN,
        "archived": False,
        "forkedFrom": None,
        "status": "idle",
        "persisted": False,
        "rootSessionId": root,
        "cwdExists": True,
        "modelAvailable": True,
        "agentAvailable": True,
        "permissionMode": "auto-edit",
        "permissionModes": ["plan", "ask", "auto-edit"],
    }
    return cast("p.ConversationInfo", {**info, **fields})


def session(sid: str, model_name: str = "demo", **fields: Any) -> p.SessionSnapshot:
    info: p.SessionSnapshot = {
        "sessionId": sid,
        "parentSessionId": None,
        "agent": "default",
        "model": model_name,
        "modelChosen": False,
        "status": "idle",
        "title": "",
        "depth": 0,
        "items": [],
        "hasMore": False,
        "turn": None,
        "inbox": [],
        "usage": usage(),
        "plan": None,
        "pinned": [],
    }
    return cast("p.SessionSnapshot", {**info, **fields})


def session_info(snap: p.SessionSnapshot) -> p.SessionInfo:
    """What `session/updated` and `sessions/list` carry of a session."""
    keys = p.SessionInfo.__annotations__
    return cast("p.SessionInfo", {key: value for key, value in snap.items() if key in keys})


def summary(info: p.ConversationInfo, messages: int = 1) -> p.ConversationSummary:
    """The row `conversation/list` gives for a conversation."""
    keys = ("title", "cwd", "agent", "model", "createdAt", "updatedAt", "archived", "forkedFrom")
    row = {key: info[key] for key in keys}  # type: ignore[literal-required]
    return cast(
        "p.ConversationSummary",
        {
            **row,
            "conversationId": info["conversationId"],
            "status": info["status"],
            "messageCount": messages,
            "turnCount": messages,
        },
    )


def item(type_: str, session_id: str, text: str | None = None, **fields: Any) -> Item:
    """A completed item of `type_` (docs/protocol.md "Item")."""
    made = {
        "itemId": new_id(),
        "type": type_,
        "sessionId": session_id,
        "turnId": None,  # outside a turn unless given
        "createdAt": WHEN,
        "status": "completed",
        **({"text": text} if text is not None else {}),
        **fields,
    }
    conforms(records.ITEM_KINDS[type_], made, f"a {type_} item")
    return cast("Item", made)


def conforms(shape: type, value: object, what: str, *, sent: bool = True) -> None:
    """Fail loudly when `value` is not a `shape` (the daemon's own check, protocol/validate.py):
    params as the daemon reads them (`sent=False`: a null is an absent param), or what the
    daemon sends (a null is a value: `turnId: str | None`)."""
    if not isinstance(value, dict):
        raise FakeMisuse(f"{what}: {value!r} is not an object")
    try:
        validate.check(shape, cast("JsonObject", value), null_is_absent=not sent)
    except InvalidParams as exc:
        raise FakeMisuse(f"{what} is no {shape.__name__}: {exc}") from None
