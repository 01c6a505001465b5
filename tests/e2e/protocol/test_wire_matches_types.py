"""The real daemon's frames against protocol/payloads.py: every notification a turn, a tool call,
a subagent, a pin, a compaction, a rename and the list feed produce has exactly the fields its
TypedDict declares (each required one present, none undeclared, nested shapes and literals
too), and so do the results clients read most (the snapshot, a page of items, the usage)."""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any, Literal, NotRequired, Required, Union

from openvaala_server.client import Client
from openvaala_server.protocol import methods as m
from openvaala_server.protocol import payloads as p
from openvaala_server.protocol.json_types import JsonValue
from tests.support.daemon import Daemon
from tests.support.events import Note, collect_until, new_conversation, turn_ended

# The hub adds these to every notification of a conversation (protocol/payloads.py).
STAMP = {"conversationId", "seq"}


def problems(value: object, hint: object, where: str) -> list[str]:
    """Why `value` is not a `hint` (empty: it is one)."""
    origin = typing.get_origin(hint)
    if hint is JsonValue or hint is object or hint is Any:
        return []
    if origin in (NotRequired, Required):
        return problems(value, typing.get_args(hint)[0], where)
    if origin in (Union, types.UnionType):
        # A value that is not null is checked against the other members, for a useful message.
        args = [h for h in typing.get_args(hint) if value is None or h is not type(None)]
        options = [problems(value, h, where) for h in args]
        return [] if any(not o for o in options) else min(options, key=len)
    if origin is Literal:
        return [] if value in typing.get_args(hint) else [f"{where}: {_short(value)} not in {hint}"]
    if hint is None or hint is type(None):
        return [] if value is None else [f"{where}: {_short(value)} is not null"]
    if typing.is_typeddict(hint):
        return typeddict_problems(value, hint, where)
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__} is not a list"]
        (item,) = typing.get_args(hint)
        return [e for i, v in enumerate(value) for e in problems(v, item, f"{where}[{i}]")]
    if origin is dict:
        return [] if isinstance(value, dict) else [f"{where}: {type(value).__name__} not a dict"]
    if hint is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {_short(value)} is not a number"]
    if isinstance(hint, type):
        ok = isinstance(value, hint) and (hint is bool or not isinstance(value, bool))
        return [] if ok else [f"{where}: {_short(value)} is not {hint.__name__}"]
    return []  # an alias this checker does not read (none today)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def typeddict_problems(
    value: object, td: Any, where: str, extra: frozenset[str] = frozenset()
) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: {type(value).__name__} is not a {td.__name__}"]
    hints = typing.get_type_hints(td, include_extras=True)
    out = [f"{where}: {key!r} is not in {td.__name__}" for key in value.keys() - hints - extra]
    for key, hint in hints.items():
        optional = typing.get_origin(hint) is NotRequired or (
            typing.get_origin(hint) is not Required and key in td.__optional_keys__
        )
        if key not in value:
            if not optional:
                out.append(f"{where}: {td.__name__} lacks {key!r}")
            continue
        out += problems(value[key], hint, f"{where}.{key}")
    return out


async def _turn(client: Client, cid: str, text: str) -> list[Note]:
    await client.request(m.INPUT_SEND, {"conversationId": cid, "text": text})
    return await collect_until(client, turn_ended())


async def test_the_daemons_frames_have_the_declared_shapes(daemon: Daemon) -> None:
    client = await daemon.client()
    notes: list[Note] = []
    results: list[tuple[str, object, object]] = []
    try:
        await client.request(m.CONVERSATION_WATCH_LIST, {})
        cid = await new_conversation(client, str(daemon.workdir))
        notes += await _turn(client, cid, "think: the shapes")
        notes += await _turn(client, cid, "run: echo hi")
        page = await client.request(m.CONVERSATION_READ, {"conversationId": cid})
        results.append(("read", page, p.ReadResult))
        first = page["items"][0]["itemId"]
        pin = {"conversationId": cid, "itemId": first}
        results.append(("pin", await client.request(m.CONVERSATION_PIN, pin), p.PinResult))
        notes += await collect_until(client, lambda n: n["method"] == m.PINS_UPDATED)
        compact = await client.request(m.CONVERSATION_COMPACT, {"conversationId": cid})
        results.append(("compact", compact, p.CompactResult))
        rename = {"conversationId": cid, "title": "shapes"}
        await client.request(m.CONVERSATION_RENAME, rename)
        notes += await collect_until(
            client,
            lambda n: (
                n["method"] == m.CONVERSATION_LIST_CHANGED
                and n["params"].get("conversation", {}).get("title") == "shapes"
            ),
        )
        # Last, as it ends with turns still to come (the subagent's report starts one).
        await client.request(m.INPUT_SEND, {"conversationId": cid, "text": "spawn: run: echo x"})
        started = await collect_until(client, lambda n: n["method"] == m.SESSION_STARTED)
        child = started[-1]["params"]["session"]["sessionId"]
        notes += started + await collect_until(client, turn_ended(child))
        usage = await client.request(m.CONVERSATION_USAGE, {"conversationId": cid})
        results.append(("usage", usage, p.Usage))
        context = await client.request(m.CONVERSATION_CONTEXT, {"conversationId": cid})
        results.append(("context", context, p.ContextTrace))
        snapshot = await client.request(m.CONVERSATION_SUBSCRIBE, {"conversationId": cid})
        results.append(("subscribe", snapshot, p.SubscribeResult))
        listed = await client.request(m.CONVERSATION_LIST, {})
        results.append(("list", listed, p.ListResult))
        sessions = await client.request(m.SESSIONS_LIST, {"conversationId": cid})
        results.append(("sessions", sessions, p.SessionsResult))
    finally:
        await client.close()
    seen = {n["method"] for n in notes}
    # What this script exercises; a notification it stops producing would hide from the check.
    assert {
        m.TURN_STARTED,
        m.TURN_ENDED,
        m.ITEM_STARTED,
        m.ITEM_DELTA,
        m.ITEM_COMPLETED,
        m.SESSION_STARTED,
        m.SESSION_UPDATED,
        m.CONVERSATION_UPDATED,
        m.USAGE_UPDATED,
        m.PINS_UPDATED,
        m.COMPACTION_STARTED,
        m.COMPACTION_COMPLETED,
        m.CONVERSATION_LIST_CHANGED,
    } <= seen, seen
    wrong: list[str] = []
    for note in notes:
        method = note["method"]
        if method not in m.NOTIFICATIONS:  # the client library's own (reconnects)
            continue
        stamp = frozenset() if method == m.CONVERSATION_LIST_CHANGED else frozenset(STAMP)
        declared = p.NOTIFICATION_PARAMS[method]
        wrong += typeddict_problems(note["params"], declared, method, stamp)
    for name, value, shape in results:
        wrong += problems(value, shape, name)
    assert not wrong, "\n".join(dict.fromkeys(wrong))


def test_the_checker_names_what_is_wrong() -> None:
    note = {"sessionId": "s", "turnId": "t", "status": "paused", "extra": 1}
    assert sorted(typeddict_problems(note, p.TurnEndedNote, "turn/ended")) == [
        "turn/ended.status: 'paused' not in typing.Literal['completed', 'interrupted', 'failed']",
        "turn/ended: 'extra' is not in TurnEndedNote",
    ]
    assert typeddict_problems({"sessionId": "s"}, p.TurnStartedNote, "turn/started") == [
        "turn/started: TurnStartedNote lacks 'turnId'"
    ]


APPROVING = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
approval = "always"
"""


async def test_approvals_deletion_and_config_frames_have_the_declared_shapes(
    daemon_factory: Callable[..., Daemon],
) -> None:
    d = daemon_factory(config=APPROVING)
    client = await d.client()
    notes: list[Note] = []
    results: list[tuple[str, object, object]] = []
    try:
        results.append(("initialize", client.server_info, p.InitializeResult))
        cid = await new_conversation(client, str(d.workdir))
        await client.request(m.INPUT_SEND, {"conversationId": cid, "text": "run: rm -f x.log"})
        asked = await collect_until(client, lambda n: n["method"] == m.APPROVAL_REQUESTED)
        approval = asked[-1]["params"]["approvalId"]
        snapshot = await client.request(m.CONVERSATION_SUBSCRIBE, {"conversationId": cid})
        results.append(("subscribe", snapshot, p.SubscribeResult))
        answer = {
            "conversationId": cid,
            "approvalId": approval,
            "decision": "deny",
            "message": "no",
        }
        results.append(
            ("respond", await client.request(m.APPROVAL_RESPOND, answer), p.RespondResult)
        )
        notes += asked + await collect_until(client, turn_ended())
        good = d.config_path.read_text()
        d.config_path.write_text(good.replace('model = "demo"', 'modle = "demo"'))
        notes += await collect_until(client, lambda n: n["method"] == m.CONFIG_ERROR)
        d.config_path.write_text(good + '\n[models.second]\nprovider = "demo"\n')
        notes += await collect_until(client, lambda n: n["method"] == m.CONFIG_RELOADED)
        await client.request(m.CONVERSATION_DELETE, {"conversationId": cid})
        notes += await collect_until(client, lambda n: n["method"] == m.CONVERSATION_DELETED)
        for method, declared in [
            (m.AGENTS_LIST, p.AgentsResult),
            (m.MODELS_LIST, p.ModelsResult),
            (m.MCP_LIST, p.McpResult),
        ]:
            results.append((method, await client.request(method, {}), declared))
    finally:
        await client.close()
    seen = {n["method"] for n in notes}
    assert {
        m.APPROVAL_REQUESTED,
        m.APPROVAL_RESOLVED,
        m.CONFIG_ERROR,
        m.CONFIG_RELOADED,
        m.CONVERSATION_DELETED,
    } <= seen, seen
    wrong: list[str] = []
    for note in notes:
        method = note["method"]
        if method not in m.NOTIFICATIONS:
            continue
        daemon_wide = method in (m.CONFIG_ERROR, m.CONFIG_RELOADED)
        stamp = frozenset() if daemon_wide else frozenset(STAMP)
        wrong += typeddict_problems(note["params"], p.NOTIFICATION_PARAMS[method], method, stamp)
    for name, value, shape in results:
        wrong += problems(value, shape, name)
    assert not wrong, "\n".join(dict.fromkeys(wrong))
