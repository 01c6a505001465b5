"""The pure fold of OpenVaala notifications into Codex's (openvaala_server/codex/events.py), with
no daemon: the cases a live run reaches only rarely, each output checked against Codex's schema."""

from __future__ import annotations

from typing import Any

from openvaala_server.codex.events import Ask, Out, Settled, ThreadFeed
from openvaala_server.codex.ids import thread_id
from tests.codex import schema_check

CID, ROOT, CHILD = "a" * 32, "b" * 32, "c" * 32
TURN = "d" * 32
INFO: dict[str, Any] = {
    "conversationId": CID,
    "rootSessionId": ROOT,
    "cwd": "/work",
    "title": "t",
    "model": "demo",
    "agent": "default",
    "createdAt": "2026-12-02T10:00:25.613794Z",
    "updatedAt": "2026-12-02T10:00:25.613794Z",
    "status": "idle",
    "forkedFrom": None,
}


def feed() -> ThreadFeed:
    return ThreadFeed(dict(INFO), clock=lambda: 1_000)


def notes(outs: list[Out]) -> list[dict[str, Any]]:
    out = []
    for o in outs:
        assert not isinstance(o, Ask | Settled)
        message = {"method": o["method"], "params": o["params"]}
        schema_check.check_notification(message)
        out.append(message)
    return out


def call(name: str, arguments: dict[str, Any], session: str = ROOT) -> dict[str, Any]:
    return {
        "itemId": "e" * 32,
        "type": "tool_call",
        "sessionId": session,
        "turnId": TURN,
        "createdAt": "2026-12-02T10:00:26Z",
        "status": "completed",
        "callId": "call-1",
        "name": name,
        "arguments": arguments,
        "argumentsText": "{}",
    }


def result(name: str, output: str, is_error: bool = False) -> dict[str, Any]:
    return {
        "itemId": "f" * 32,
        "type": "tool_result",
        "sessionId": ROOT,
        "turnId": TURN,
        "createdAt": "2026-12-02T10:00:27Z",
        "status": "completed",
        "callId": "call-1",
        "name": name,
        "output": output,
        "isError": is_error,
    }


def test_a_manual_compaction_is_a_turn_of_its_own() -> None:
    f = feed()
    started = notes(f.feed("compaction/started", {"sessionId": ROOT, "reason": "manual", "seq": 7}))
    assert [n["method"] for n in started] == ["turn/started", "item/started"]
    assert started[1]["params"]["item"] == {"type": "contextCompaction", "id": f"{7:032x}"}
    failed = notes(
        f.feed(
            "compaction/failed",
            {
                "sessionId": ROOT,
                "reason": "manual",
                "error": {"kind": "auth_failed", "message": "no"},
            },
        )
    )
    assert [n["method"] for n in failed] == ["item/completed", "error", "turn/completed"]
    assert failed[1]["params"]["error"]["codexErrorInfo"] == "unauthorized"
    assert failed[2]["params"]["turn"]["status"] == "failed"
    assert f.turn_of == {}


def test_an_automatic_compaction_stays_inside_its_turn() -> None:
    f = feed()
    notes(f.feed("turn/started", {"sessionId": ROOT, "turnId": TURN}))
    started = notes(f.feed("compaction/started", {"sessionId": ROOT, "reason": "auto", "seq": 9}))
    assert [n["method"] for n in started] == ["item/started"]
    done = notes(f.feed("compaction/completed", {"sessionId": ROOT, "reason": "auto"}))
    assert [n["method"] for n in done] == ["item/completed"]
    assert done[0]["params"]["turnId"] == TURN and f.turn_of == {ROOT: TURN}


def test_approvals_ask_by_tool_and_settle() -> None:
    f = feed()
    notes(f.feed("turn/started", {"sessionId": ROOT, "turnId": TURN}))
    notes(
        f.feed(
            "item/started",
            {"sessionId": ROOT, "turnId": TURN, "item": call("write_file", {"path": "x"})},
        )
    )
    [ask] = f.feed(
        "approval/requested",
        {
            "sessionId": ROOT,
            "approvalId": "1" * 32,
            "tool": "write_file",
            "summary": "write x",
            "arguments": {"path": "x"},
            "reason": "writes ask",
            "agent": "default",
        },
    )
    assert isinstance(ask, Ask) and ask.method == "item/fileChange/requestApproval"
    schema_check.check_server_request({"id": 1, "method": ask.method, "params": ask.params})
    assert ask.params["itemId"] == "e" * 32
    [settled] = f.feed(
        "approval/resolved", {"sessionId": ROOT, "approvalId": "1" * 32, "decision": "allow"}
    )
    assert settled == Settled("1" * 32, thread_id(CID))


def test_mcp_and_other_tools_map_to_their_items() -> None:
    f = feed()
    notes(f.feed("turn/started", {"sessionId": ROOT, "turnId": TURN}))
    notes(
        f.feed(
            "item/started",
            {"sessionId": ROOT, "turnId": TURN, "item": call("mcp__docs__search", {"q": "x"})},
        )
    )
    [done] = notes(
        f.feed("item/completed", {"sessionId": ROOT, "item": result("mcp__docs__search", "found")})
    )
    item = done["params"]["item"]
    assert (item["type"], item["server"], item["tool"], item["status"]) == (
        "mcpToolCall",
        "docs",
        "search",
        "completed",
    )
    assert item["result"]["content"] == [{"type": "text", "text": "found"}]

    notes(
        f.feed(
            "item/started",
            {"sessionId": ROOT, "turnId": TURN, "item": call("grep", {"pattern": "x"})},
        )
    )
    [done] = notes(
        f.feed("item/completed", {"sessionId": ROOT, "item": result("grep", "no match", True)})
    )
    item = done["params"]["item"]
    assert (item["type"], item["tool"], item["success"]) == ("dynamicToolCall", "grep", False)


def test_a_subagent_is_announced_as_a_thread_and_its_events_carry_its_id() -> None:
    f = feed()
    session: dict[str, Any] = {
        "sessionId": CHILD,
        "parentSessionId": ROOT,
        "agent": "default",
        "model": "demo",
        "status": "idle",
        "title": "say hi",
        "depth": 1,
    }
    [started] = notes(f.feed("session/started", {"session": session}))
    thread = started["params"]["thread"]
    assert thread["id"] == thread_id(CHILD) and thread["parentThreadId"] == thread_id(CID)
    [turn, status] = notes(f.feed("turn/started", {"sessionId": CHILD, "turnId": TURN}))
    assert turn["params"]["threadId"] == thread_id(CHILD)
    assert status["params"] == {
        "threadId": thread_id(CHILD),
        "status": {"type": "active", "activeFlags": []},
    }


def test_a_new_title_is_a_name_update_once() -> None:
    f = feed()
    renamed = {**INFO, "title": "new name"}
    [named] = notes(f.feed("conversation/updated", {"conversation": renamed}))
    assert named["params"] == {"threadId": thread_id(CID), "threadName": "new name"}
    assert f.feed("conversation/updated", {"conversation": renamed}) == []
