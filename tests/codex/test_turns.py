"""A Codex client's thread is an OpenVaala conversation: a turn streams as Codex items and
deltas, its history reads back as turns, and the conversation is the daemon's own."""

from __future__ import annotations

import base64
from collections.abc import Callable

from tests.codex.flows import demo_config, items_of, run_turn, start_thread, text_input
from tests.codex.harness import CodexClient, WebSocketTransport, open_client
from tests.support.daemon import Daemon

Factory = Callable[..., Daemon]

DOT_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR42mNgYAAAAAMAAWgmWQ0AAAAASUVORK5CYII="
)


async def test_a_turn_streams_as_codex_items(codex: CodexClient, daemon: Daemon) -> None:
    thread = await start_thread(codex, str(daemon.workdir))
    started = await codex.wait_for("thread/started", lambda p: p["thread"]["id"] == thread)
    assert started["thread"]["cwd"] == str(daemon.workdir)

    turn, mark = await run_turn(codex, thread, "hello there")

    assert codex.after(mark, "turn/started")[0]["turn"]["id"] == turn
    user = items_of(codex, mark, "item/completed", "userMessage")
    assert user[0]["content"][0]["text"] == "hello there"
    answers = items_of(codex, mark, "item/completed", "agentMessage")
    deltas = "".join(d["delta"] for d in codex.after(mark, "item/agentMessage/delta"))
    assert answers[0]["text"] == deltas and "hello there" in deltas
    assert items_of(codex, mark, "item/started", "agentMessage")[0]["id"] == answers[0]["id"]
    ended = codex.after(mark, "turn/completed")[0]["turn"]
    assert ended["status"] == "completed" and ended["error"] is None
    assert (
        codex.after(mark, "thread/tokenUsage/updated")[-1]["tokenUsage"]["total"]["totalTokens"] > 0
    )
    await codex.wait_for(
        "thread/status/changed", lambda p: p["status"]["type"] == "idle", after=mark
    )
    statuses = [s["status"]["type"] for s in codex.after(mark, "thread/status/changed")]
    assert statuses == ["active", "idle"]

    read = await codex.request("thread/read", {"threadId": thread, "includeTurns": True})
    [saved] = read["thread"]["turns"]
    assert saved["id"] == turn
    assert [i["type"] for i in saved["items"]] == ["userMessage", "agentMessage"]
    listed = await codex.request("thread/list", {"limit": 10})
    assert [t["id"] for t in listed["data"]] == [thread]
    assert listed["data"][0]["name"] == "hello there"


async def test_a_command_runs_as_a_command_execution(codex: CodexClient, daemon: Daemon) -> None:
    thread = await start_thread(codex, str(daemon.workdir))
    _, mark = await run_turn(codex, thread, "run: echo from-codex")
    [command] = items_of(codex, mark, "item/completed", "commandExecution")
    assert command["command"] == "bash -c 'echo from-codex'"
    assert command["exitCode"] == 0 and command["status"] == "completed"
    assert "from-codex" in command["aggregatedOutput"]
    assert items_of(codex, mark, "item/started", "commandExecution")[0]["status"] == "inProgress"
    streamed = "".join(d["delta"] for d in codex.after(mark, "item/commandExecution/outputDelta"))
    assert "from-codex" in streamed


async def test_resume_name_archive_and_unsubscribe(codex: CodexClient, daemon: Daemon) -> None:
    thread = await start_thread(codex, str(daemon.workdir))
    turn, _ = await run_turn(codex, thread, "first words")
    mark = len(codex.notes)
    await codex.request("thread/name/set", {"threadId": thread, "name": "Named from Codex"})
    renamed = await codex.wait_for("thread/name/updated", after=mark)
    assert renamed == {"threadId": thread, "threadName": "Named from Codex"}

    resumed = await codex.request("thread/resume", {"threadId": thread})
    assert [t["id"] for t in resumed["thread"]["turns"]] == [turn]
    assert resumed["thread"]["name"] == "Named from Codex"
    turns = await codex.request("thread/turns/list", {"threadId": thread})
    assert [t["id"] for t in turns["data"]] == [turn]
    loaded = await codex.request("thread/loaded/list", {})
    assert thread in loaded["data"]

    await codex.request("thread/archive", {"threadId": thread})
    assert (await codex.request("thread/list", {}))["data"] == []
    archived = await codex.request("thread/list", {"archived": True})
    assert [t["id"] for t in archived["data"]] == [thread]
    await codex.request("thread/unarchive", {"threadId": thread})
    assert [t["id"] for t in (await codex.request("thread/list", {}))["data"]] == [thread]

    assert (await codex.request("thread/unsubscribe", {"threadId": thread}))[
        "status"
    ] == "unsubscribed"
    assert (await codex.request("thread/unsubscribe", {"threadId": thread}))[
        "status"
    ] == "notSubscribed"


async def test_images_go_with_the_message(codex: CodexClient, daemon: Daemon) -> None:
    thread = await start_thread(codex, str(daemon.workdir))
    mark = len(codex.notes)
    image = {"type": "image", "url": f"data:image/png;base64,{DOT_PNG}"}
    (daemon.workdir / "dot.png").write_bytes(base64.b64decode(DOT_PNG))
    local = {"type": "localImage", "path": str(daemon.workdir / "dot.png")}
    text = {"type": "text", "text": "what is this?", "text_elements": []}
    answer = await codex.request("turn/start", {"threadId": thread, "input": [text, image, local]})
    turn = answer["turn"]["id"]
    await codex.wait_for("turn/completed", lambda p: p["turn"]["id"] == turn, after=mark)
    async with await daemon.client() as client:
        page = await client.request(
            "conversation/read", {"conversationId": thread.replace("-", "")}
        )
    [message] = [i for i in page["items"] if i["type"] == "user_message"]
    assert message["text"] == "what is this?"
    assert [(i["mediaType"], i["size"]) for i in message["images"]] == [("image/png", 68)] * 2
    assert message["images"][1]["name"] == "dot.png"
    # A relative path is the thread's directory's, not the daemon's.
    relative = {"type": "localImage", "path": "dot.png"}
    mark = len(codex.notes)
    again = await codex.request("turn/start", {"threadId": thread, "input": [text, relative]})
    await codex.wait_for(
        "turn/completed", lambda p: p["turn"]["id"] == again["turn"]["id"], after=mark
    )
    async with await daemon.client() as client:
        page = await client.request(
            "conversation/read", {"conversationId": thread.replace("-", "")}
        )
    last = [i for i in page["items"] if i["type"] == "user_message"][-1]
    assert [(i["name"], i["size"]) for i in last["images"]] == [("dot.png", 68)]
    missing = {"type": "localImage", "path": str(daemon.workdir / "nope.png")}
    refused = await codex.call("turn/start", {"threadId": thread, "input": [missing]})
    assert "nope.png" in refused["error"]["message"]
    odd = await codex.call(
        "turn/start", {"threadId": thread, "input": [{"type": "audio", "url": "x"}]}
    )
    assert "'audio' is not supported" in odd["error"]["message"]


async def test_a_model_chosen_in_codex_is_the_conversation_s(daemon_factory: Factory) -> None:
    daemon = daemon_factory(demo_config() + '\n[models.other]\nprovider = "demo"\npace_ms = 0\n')
    codex = await open_client(daemon, "websocket")
    try:
        models = await codex.request("model/list", {})
        assert {m["id"] for m in models["data"]} == {"demo", "other"}
        thread = await start_thread(codex, str(daemon.workdir))
        mark = len(codex.notes)
        answer = await codex.request(
            "turn/start", {"threadId": thread, "input": text_input("hello"), "model": "other"}
        )
        await codex.wait_for(
            "turn/completed", lambda p: p["turn"]["id"] == answer["turn"]["id"], after=mark
        )
        read = await codex.request("thread/read", {"threadId": thread})
        assert read["thread"]["model"] == "other"
        unknown = await codex.call(
            "turn/start", {"threadId": thread, "input": text_input("hi"), "model": "nope"}
        )
        assert "nope" in unknown["error"]["message"]
    finally:
        await codex.close()


async def test_notifications_a_client_opts_out_of_are_not_sent(daemon: Daemon) -> None:
    codex = CodexClient(await WebSocketTransport.open(daemon))
    try:
        await codex.initialize(
            optOutNotificationMethods=["item/agentMessage/delta", "thread/started"]
        )
        thread = await start_thread(codex, str(daemon.workdir))
        _, mark = await run_turn(codex, thread, "hello there")
        assert items_of(codex, mark, "item/completed", "agentMessage")
        methods = {n["method"] for n in codex.notes}
        assert "item/agentMessage/delta" not in methods and "thread/started" not in methods
    finally:
        await codex.close()
