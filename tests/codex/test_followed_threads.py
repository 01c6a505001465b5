"""Which threads a Codex client follows and hears about: closing a subagent's thread leaves its
parent's followed (and a rollback of it does not rewind its parent's); a thread archived by one
client is announced to every client following it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.codex.flows import demo_config, run_turn, start_thread, text_input
from tests.codex.harness import open_client
from tests.support.daemon import Daemon
from tests.support.events import collect_until, turn_ended

Factory = Callable[..., Daemon]


@pytest.mark.timeout(120)
async def test_closing_a_subagent_thread_keeps_its_parent_followed(
    daemon_factory: Factory,
) -> None:
    daemon = daemon_factory(demo_config())
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        await run_turn(codex, thread, "spawn: say hi")
        child = (await codex.wait_for("thread/started", lambda p: p["thread"]["id"] != thread))[
            "thread"
        ]["id"]
        await codex.wait_for("turn/completed", lambda p: p["threadId"] == child)
        await codex.request("thread/resume", {"threadId": child})

        mark = len(codex.notes)
        closed = await codex.request("thread/unsubscribe", {"threadId": child})
        assert closed == {"status": "unsubscribed"}
        assert codex.after(mark, "thread/closed") == [{"threadId": child}]
        loaded = await codex.request("thread/loaded/list", {})
        assert loaded["data"] == [thread]
        # A rollback counts the subagent's turns, not its parent's: refused, as thread/revert.
        refused = await codex.call("thread/rollback", {"threadId": child, "numTurns": 1})
        assert refused["error"]["data"] == {"kind": "invalid_params", "param": "threadId"}

        # The subagent goes on (told by another client), then the parent: the Codex client
        # hears the parent's turn, and nothing more of the closed subagent's.
        cid, sid = thread.replace("-", ""), child.replace("-", "")
        async with await daemon.client() as client:
            await client.subscribe(cid)
            text = {"conversationId": cid, "sessionId": sid, "text": "more"}
            await client.request("input/send", text)
            await collect_until(client, turn_ended(sid))
            mark = len(codex.notes)
            await client.request("input/send", {"conversationId": cid, "text": "from openvaala"})
        await codex.wait_for("turn/completed", lambda p: p["threadId"] == thread, after=mark)
        assert [n for n in codex.notes[mark:] if n["params"].get("threadId") == child] == []

        # Closed once; opened again, it is followed again.
        again = await codex.request("thread/unsubscribe", {"threadId": child})
        assert again == {"status": "notSubscribed"}
        await codex.request("thread/resume", {"threadId": child})
        assert await codex.request("thread/unsubscribe", {"threadId": child}) == closed
    finally:
        await codex.close()


async def test_every_client_following_a_thread_hears_it_archived(
    daemon_factory: Factory,
) -> None:
    daemon = daemon_factory(demo_config())
    codex = await open_client(daemon, "websocket")
    other = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        await run_turn(codex, thread, "hello")
        await other.request("thread/resume", {"threadId": thread})
        await codex.request("thread/archive", {"threadId": thread})
        await other.wait_for("thread/archived", lambda p: p["threadId"] == thread)
        await codex.request("thread/unarchive", {"threadId": thread})
        await other.wait_for("thread/unarchived", lambda p: p["threadId"] == thread)
        # The client that asked is told once of each.
        assert [n["method"] for n in codex.notes if n["method"].endswith("archived")] == [
            "thread/archived",
            "thread/unarchived",
        ]
    finally:
        await codex.close()
        await other.close()


@pytest.mark.timeout(120)
async def test_a_closed_subagent_thread_s_approval_is_still_resolved(
    daemon_factory: Factory,
) -> None:
    """A client asked to approve a subagent's command, which then closes that thread, is still
    told when another client answers (its request does not stay open)."""
    daemon = daemon_factory(demo_config(approval="always"))
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        cid = thread.replace("-", "")
        await codex.request(
            "turn/start", {"threadId": thread, "input": text_input("spawn: run: echo hi")}
        )
        asked = await codex.wait_request("item/commandExecution/requestApproval")
        child = asked["params"]["threadId"]
        assert child != thread
        await codex.request("thread/resume", {"threadId": child})
        await codex.request("thread/unsubscribe", {"threadId": child})
        mark = len(codex.notes)
        async with await daemon.client() as other:
            pending: Any = await other.request("conversation/subscribe", {"conversationId": cid})
            [approval] = pending["snapshot"]["approvals"]
            await other.request(
                "approval/respond",
                {"conversationId": cid, "approvalId": approval["approvalId"], "decision": "deny"},
            )
        resolved = await codex.wait_for("serverRequest/resolved", after=mark)
        assert resolved == {"threadId": child, "requestId": asked["id"]}
    finally:
        await codex.close()
