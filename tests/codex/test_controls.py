"""Steering, interrupting, approving, forking, rewinding and compacting a thread from Codex."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from typing import Any

import pytest

from tests.codex.flows import (
    answered_elsewhere,
    demo_config,
    items_of,
    run_turn,
    start_thread,
    text_input,
)
from tests.codex.harness import CodexClient, open_client
from tests.support.daemon import Daemon

Factory = Callable[..., Daemon]


@pytest.mark.timeout(180)  # a slow model and two clients, on a shared machine
@pytest.mark.parametrize("transport", ["websocket", "stdio"])
async def test_steer_then_interrupt(daemon_factory: Factory, transport: str) -> None:
    daemon = daemon_factory(demo_config(pace_ms=150))
    codex = await open_client(daemon, transport)
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        mark = len(codex.notes)
        answer = await codex.request(
            "turn/start", {"threadId": thread, "input": text_input("tell me a long story")}
        )
        turn = answer["turn"]["id"]
        await codex.wait_for("item/agentMessage/delta", after=mark)
        steered = await codex.request(
            "turn/steer",
            {
                "threadId": thread,
                "expectedTurnId": turn,
                "input": text_input("and make it short"),
            },
        )
        assert steered == {"turnId": turn}
        wrong = await codex.call(
            "turn/steer",
            {"threadId": thread, "expectedTurnId": "0" * 32, "input": text_input("x")},
        )
        assert "expectedTurnId" in str(wrong["error"])
        await codex.request("turn/interrupt", {"threadId": thread, "turnId": turn})
        ended = await codex.wait_for(
            "turn/completed", lambda p: p["turn"]["id"] == turn, after=mark
        )
        assert ended["turn"]["status"] == "interrupted"
        # The steering message was not taken by the cut turn: it starts the next one.
        steering = await codex.wait_for(
            "item/completed",
            lambda p: p["item"]["type"] == "userMessage" and p["turnId"] != turn,
            after=mark,
        )
        assert steering["item"]["content"][0]["text"] == "and make it short"
        await codex.request("turn/interrupt", {"threadId": thread, "turnId": steering["turnId"]})
        await codex.wait_for(
            "turn/completed", lambda p: p["turn"]["id"] == steering["turnId"], after=mark
        )
    finally:
        await codex.close()


async def test_a_client_that_opens_a_running_turn_follows_it(daemon_factory: Factory) -> None:
    daemon = daemon_factory(demo_config(pace_ms=150))
    first = await open_client(daemon, "websocket")
    second = await open_client(daemon, "stdio")
    try:
        thread = await start_thread(first, str(daemon.workdir))
        answer = await first.request(
            "turn/start", {"threadId": thread, "input": text_input("tell me a long story")}
        )
        turn = answer["turn"]["id"]
        delta = await first.wait_for("item/agentMessage/delta")
        resumed = await second.request("thread/resume", {"threadId": thread})
        [running] = resumed["thread"]["turns"]
        assert running["id"] == turn and running["status"] == "inProgress"
        assert resumed["thread"]["status"]["type"] == "active"
        # The answer streaming when it opened the thread goes on streaming to it.
        more = await second.wait_for("item/agentMessage/delta")
        assert more["itemId"] == delta["itemId"] and more["turnId"] == turn
        await second.request("turn/interrupt", {"threadId": thread, "turnId": turn})
        ended = await second.wait_for("turn/completed")
        assert ended["turn"]["status"] == "interrupted"
        [answered] = [
            i for i in second.after(0, "item/completed") if i["item"]["id"] == delta["itemId"]
        ]
        assert first.after(0, "item/agentMessage/delta")[0]["delta"] in answered["item"]["text"]
    finally:
        await first.close()
        await second.close()


def _accept(message: dict[str, Any]) -> object:
    return {"decision": "accept"}


def _decline(message: dict[str, Any]) -> object:
    return {"decision": "decline"}


async def test_a_command_waits_for_the_codex_client_s_approval(daemon_factory: Factory) -> None:
    daemon = daemon_factory(demo_config(approval="always"))
    codex = await open_client(daemon, "stdio")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        codex.answer = _accept
        _, mark = await run_turn(codex, thread, "run: echo approved")
        [asked] = codex.requests
        assert asked["method"] == "item/commandExecution/requestApproval"
        assert asked["params"]["command"] == "bash -c 'echo approved'"
        assert asked["params"]["threadId"] == thread
        [ran] = items_of(codex, mark, "item/completed", "commandExecution")
        assert ran["id"] == asked["params"]["itemId"]
        assert ran["status"] == "completed" and "approved" in ran["aggregatedOutput"]

        codex.answer = _decline
        _, mark = await run_turn(codex, thread, "run: echo refused")
        [refused] = items_of(codex, mark, "item/completed", "commandExecution")
        assert refused["status"] == "declined" and refused["aggregatedOutput"] is None
        assert codex.after(mark, "serverRequest/resolved") == []  # it answered itself
    finally:
        await codex.close()


async def test_another_client_answering_first_resolves_the_request(daemon_factory: Factory) -> None:
    daemon = daemon_factory(demo_config(approval="always"))
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        asked, mark = await answered_elsewhere(daemon, codex, thread, "run: echo hi", "allow")
        resolved = await codex.wait_for("serverRequest/resolved", after=mark)
        assert resolved == {"threadId": thread, "requestId": asked["id"]}
        [ran] = items_of(codex, mark, "item/completed", "commandExecution")
        assert ran["exitCode"] == 0
    finally:
        await codex.close()


async def test_fork_and_rollback_make_new_threads(codex: CodexClient, daemon: Daemon) -> None:
    thread = await start_thread(codex, str(daemon.workdir))
    first, _ = await run_turn(codex, thread, "first message")
    second, _ = await run_turn(codex, thread, "second message")

    forked = await codex.request("thread/fork", {"threadId": thread, "lastTurnId": first})
    fork = forked["thread"]
    assert fork["id"] != thread and fork["forkedFromId"] == thread
    assert [t["id"] for t in fork["turns"]] == [first]
    whole = await codex.request("thread/fork", {"threadId": thread})
    assert [t["id"] for t in whole["thread"]["turns"]] == [first, second]

    # Codex's older rollback: the last turn dropped, in a new thread; the original unchanged.
    rolled = await codex.call("thread/rollback", {"threadId": thread, "numTurns": 1})
    rewound = rolled["result"]["thread"]
    assert rewound["id"] not in (thread, fork["id"]) and rewound["forkedFromId"] == thread
    assert [t["id"] for t in rewound["turns"]] == [first]
    _, mark = await run_turn(codex, rewound["id"], "another second message")
    assert items_of(codex, mark, "item/completed", "agentMessage")
    original = await codex.request("thread/read", {"threadId": thread, "includeTurns": True})
    assert [t["id"] for t in original["thread"]["turns"]] == [first, second]
    too_many = await codex.call("thread/rollback", {"threadId": thread, "numTurns": 3})
    assert "only 2 turns" in too_many["error"]["message"]
    listed = {t["id"] for t in (await codex.request("thread/list", {}))["data"]}
    assert listed == {thread, fork["id"], whole["thread"]["id"], rewound["id"]}


async def test_revert_keeps_the_thread_id_on_the_rewound_copy(
    codex: CodexClient, daemon: Daemon
) -> None:
    """The Codex TUI's rewind (Esc Esc, edit a message) sends thread/revert and waits for
    thread/reverted of the same thread; OpenVaala keeps the original conversation."""
    thread = await start_thread(codex, str(daemon.workdir))
    first, _ = await run_turn(codex, thread, "first message")
    second, _ = await run_turn(codex, thread, "second message")

    mark = len(codex.notes)
    reverted = await codex.request("thread/revert", {"threadId": thread, "beforeTurnId": second})
    assert reverted["thread"]["id"] == thread and reverted["thread"]["turns"] == []
    await codex.wait_for("thread/reverted", lambda p: p["threadId"] == thread, after=mark)
    assert codex.after(mark, "thread/started") == []  # no new thread for Codex
    listed = await codex.request("thread/turns/list", {"threadId": thread})
    assert [t["id"] for t in listed["data"]] == [first]

    # The thread goes on from the first turn, under its id.
    third, mark = await run_turn(codex, thread, "another second message")
    assert items_of(codex, mark, "item/completed", "agentMessage")
    read = await codex.request("thread/read", {"threadId": thread, "includeTurns": True})
    assert [t["id"] for t in read["thread"]["turns"]] == [first, third]
    assert read["thread"]["forkedFromId"] is None
    assert [t["id"] for t in (await codex.request("thread/list", {}))["data"]] == [thread]
    # A second revert rewinds the copy, still under the same id.
    again = await codex.request("thread/revert", {"threadId": thread, "beforeTurnId": third})
    assert again["thread"]["id"] == thread
    listed = await codex.request("thread/turns/list", {"threadId": thread})
    assert [t["id"] for t in listed["data"]] == [first]

    # OpenVaala rewrote nothing: the original conversation still has both turns.
    cid = thread.replace("-", "")
    async with await daemon.client() as client:
        page = await client.request("conversation/read", {"conversationId": cid})
        texts = [i["text"] for i in page["items"] if i["type"] == "user_message"]
        assert texts == ["first message", "second message"]
        conversations = (await client.request("conversation/list", {}))["conversations"]
        assert len(conversations) == 3


async def test_compact_from_codex(codex: CodexClient, daemon: Daemon) -> None:
    thread = await start_thread(codex, str(daemon.workdir))
    await run_turn(codex, thread, "something worth summarizing")
    mark = len(codex.notes)
    assert await codex.request("thread/compact/start", {"threadId": thread}) == {}
    started = await codex.wait_for("turn/started", after=mark)
    compacted = await codex.wait_for(
        "item/completed", lambda p: p["item"]["type"] == "contextCompaction", after=mark
    )
    ended = await codex.wait_for("turn/completed", after=mark)
    assert compacted["turnId"] == started["turn"]["id"] == ended["turn"]["id"]
    assert ended["turn"]["status"] == "completed"
    async with await daemon.client() as client:
        page = await client.request(
            "conversation/read", {"conversationId": thread.replace("-", "")}
        )
    [summary] = [i for i in page["items"] if i["type"] == "summary"]
    assert summary["reason"] == "manual"
    read = await codex.request("thread/read", {"threadId": thread, "includeTurns": True})
    kinds = [i["type"] for t in read["thread"]["turns"] for i in t["items"]]
    assert kinds[-1] == "contextCompaction"


async def test_compact_with_nothing_to_compact_ends_its_turn(
    codex: CodexClient, daemon: Daemon
) -> None:
    """The Codex TUI shows "Compacting" until a turn ends: a compaction the daemon does not
    run (no messages yet, a history too short) still ends one, saying why."""
    thread = await start_thread(codex, str(daemon.workdir))
    mark = len(codex.notes)
    assert await codex.request("thread/compact/start", {"threadId": thread}) == {}
    started = await codex.wait_for("turn/started", after=mark)
    warned = await codex.wait_for("warning", after=mark)
    ended = await codex.wait_for("turn/completed", after=mark)
    assert started["turn"]["id"] == ended["turn"]["id"] and ended["threadId"] == thread
    assert ended["turn"]["status"] == "completed"
    assert warned == {
        "threadId": thread,
        "message": "Nothing to compact: the conversation has no messages yet.",
    }

    # The thread goes on as before.
    _, mark = await run_turn(codex, thread, "hello after compacting nothing")
    assert items_of(codex, mark, "item/completed", "agentMessage")


async def test_a_client_that_opens_a_thread_is_asked_the_pending_approval(
    daemon_factory: Factory,
) -> None:
    daemon = daemon_factory(demo_config(approval="always"))
    first = await open_client(daemon, "websocket")
    second = await open_client(daemon, "stdio")
    try:
        thread = await start_thread(first, str(daemon.workdir))
        mark = len(first.notes)
        await first.request(
            "turn/start", {"threadId": thread, "input": text_input("run: echo pending")}
        )
        asked_first = await first.wait_request("item/commandExecution/requestApproval")
        # The first client opening the thread again is not asked twice (a request sent after
        # the answer would arrive before the next answer on the same connection).
        await first.request("thread/resume", {"threadId": thread})
        await first.request("thread/loaded/list", {})
        assert len(first.requests) == 1

        resumed = await second.request("thread/resume", {"threadId": thread})
        assert resumed["thread"]["status"]["activeFlags"] == ["waitingOnApproval"]
        second.answer = _accept
        asked = await second.wait_request("item/commandExecution/requestApproval")
        assert asked["params"]["threadId"] == thread
        assert asked["params"]["command"] == asked_first["params"]["command"]
        assert asked["params"]["command"] == "bash -c 'echo pending'"
        assert asked["params"]["itemId"] == asked_first["params"]["itemId"]
        await second.respond(asked["id"], {"decision": "accept"})

        resolved = await first.wait_for("serverRequest/resolved", after=mark)
        assert resolved == {"threadId": thread, "requestId": asked_first["id"]}
        await first.wait_for("turn/completed", after=mark)
        [ran] = items_of(first, mark, "item/completed", "commandExecution")
        assert ran["exitCode"] == 0 and "pending" in ran["aggregatedOutput"]
    finally:
        await first.close()
        await second.close()


async def test_an_approval_shows_the_command_line_as_it_runs(daemon_factory: Factory) -> None:
    """Shell syntax reaches the user as written: the command is sent as Codex sends a script,
    `bash -c <script>`, whose script Codex clients show verbatim (not `echo hi '|' tee x`)."""
    daemon = daemon_factory(demo_config(approval="always"))
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        codex.answer = _accept
        script = "echo hi | tee piped.txt && echo 'two words' > quoted.txt"
        _, mark = await run_turn(codex, thread, f"run: {script}")
        [asked] = codex.requests
        assert shlex.split(asked["params"]["command"]) == ["bash", "-c", script]
        [ran] = items_of(codex, mark, "item/completed", "commandExecution")
        assert shlex.split(ran["command"]) == ["bash", "-c", script]
        assert (daemon.workdir / "piped.txt").read_text() == "hi\n"  # it ran as shown
        assert (daemon.workdir / "quoted.txt").read_text() == "two words\n"
    finally:
        await codex.close()


async def test_a_file_change_approval_shows_the_proposed_edit(daemon_factory: Factory) -> None:
    """Codex shows a file-change approval with its item's changes: the edit proposed is there
    before it runs (not an empty "+0 -0")."""
    daemon = daemon_factory(demo_config(approval="always"))
    (daemon.workdir / "keep.py").write_text("a = 1\nb = 2\n")
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        mark = len(codex.notes)
        edit = {"path": "keep.py", "old_text": "b = 2", "new_text": "b = 3"}
        await codex.request(
            "turn/start",
            {"threadId": thread, "input": text_input(f"call: edit_file {json.dumps(edit)}")},
        )
        asked = await codex.wait_request("item/fileChange/requestApproval")
        [proposed] = [
            i
            for i in items_of(codex, mark, "item/started", "fileChange")
            if i["id"] == asked["params"]["itemId"]
        ]
        [change] = proposed["changes"]
        assert change["path"] == "keep.py"
        assert "-b = 2" in change["diff"] and "+b = 3" in change["diff"]
        assert (daemon.workdir / "keep.py").read_text() == "a = 1\nb = 2\n"  # not run yet
        await codex.respond(asked["id"], {"decision": "decline"})
        await codex.wait_for("turn/completed", after=mark)
        assert (daemon.workdir / "keep.py").read_text() == "a = 1\nb = 2\n"
    finally:
        await codex.close()
