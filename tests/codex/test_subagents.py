"""Each subagent is its own Codex thread: its spawn is a collab tool call naming it, it is
announced with its parent, and opening it follows it live; and a Codex client and an OpenVaala
client on one conversation see the same turns."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.codex.flows import demo_config, items_of, run_turn, start_thread, text_input
from tests.codex.harness import CodexClient, open_client
from tests.support.daemon import Daemon
from tests.support.events import collect_until, turn_ended

Factory = Callable[..., Daemon]


@pytest.mark.timeout(180)  # a slow model and two clients, on a shared machine
async def test_a_subagent_is_its_own_thread(daemon_factory: Factory) -> None:
    daemon = daemon_factory(demo_config(pace_ms=100))
    codex = await open_client(daemon, "websocket")
    follower = await open_client(daemon, "stdio")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        mark = len(codex.notes)
        await codex.request(
            "turn/start", {"threadId": thread, "input": text_input("spawn: say hi")}
        )
        announced = await codex.wait_for("thread/started", after=mark)
        child = announced["thread"]
        assert child["parentThreadId"] == thread and child["id"] != thread
        assert child["source"]["subAgent"]["thread_spawn"]["parent_thread_id"] == thread

        # Another client opens the subagent's thread while it works, and follows it live.
        resumed = await follower.request("thread/resume", {"threadId": child["id"]})
        assert resumed["thread"]["id"] == child["id"]
        assert resumed["thread"]["parentThreadId"] == thread
        done = await follower.wait_for("turn/completed", lambda p: p["threadId"] == child["id"])
        assert done["turn"]["status"] == "completed"
        streamed = [
            d for d in follower.after(0, "item/agentMessage/delta") if d["threadId"] == child["id"]
        ]
        assert streamed, "the follower saw the subagent's answer stream"

        spawn = await codex.wait_for(
            "item/completed",
            lambda p: p["item"]["type"] == "collabAgentToolCall" and p["threadId"] == thread,
            after=mark,
        )
        assert spawn["item"]["tool"] == "spawnAgent"
        assert spawn["item"]["receiverThreadIds"] == [child["id"]]
        assert spawn["item"]["prompt"] == "say hi"

        # The spawn edge, asked the Codex way: the threads whose parent is the root's.
        children = await codex.request("thread/list", {"parentThreadId": thread})
        assert [(t["id"], t["parentThreadId"]) for t in children["data"]] == [(child["id"], thread)]
        below = await codex.request("thread/list", {"ancestorThreadId": thread})
        assert [t["id"] for t in below["data"]] == [child["id"]]
        assert (await codex.request("thread/list", {"parentThreadId": child["id"]}))["data"] == []
        # The Codex TUI asks for the archived subagent threads apart (its subagent switcher):
        # none of a conversation that is not archived.
        archived = {"ancestorThreadId": thread, "archived": True}
        assert (await codex.request("thread/list", archived))["data"] == []

        read = await codex.request("thread/read", {"threadId": child["id"], "includeTurns": True})
        texts = [
            i.get("text") or i.get("content", [{}])[0].get("text")
            for t in read["thread"]["turns"]
            for i in t["items"]
        ]
        assert "say hi" in texts
    finally:
        await codex.close()
        await follower.close()


async def test_codex_and_openvaala_clients_see_the_same_turn(
    codex: CodexClient, daemon: Daemon
) -> None:
    thread = await start_thread(codex, str(daemon.workdir))
    cid = thread.replace("-", "")
    async with await daemon.client() as client:
        await client.subscribe(cid)
        # A turn from Codex, seen by the OpenVaala client.
        turn, mark = await run_turn(codex, thread, "from codex")
        notes = await collect_until(client, turn_ended())
        ended = [n for n in notes if n["method"] == "turn/ended"][-1]
        assert ended["params"]["turnId"] == turn
        answer = items_of(codex, mark, "item/completed", "agentMessage")[0]
        saved = [n["params"]["item"] for n in notes if n["method"] == "item/completed"]
        assert answer["id"] in [i["itemId"] for i in saved]

        # A turn from the OpenVaala client, seen by the Codex client.
        mark = len(codex.notes)
        await client.request("input/send", {"conversationId": cid, "text": "from openvaala"})
        done = await codex.wait_for("turn/completed", lambda p: p["threadId"] == thread, after=mark)
        users = items_of(codex, mark, "item/completed", "userMessage")
        assert users[0]["content"][0]["text"] == "from openvaala"
        assert codex.after(mark, "turn/started")[0]["turn"]["id"] == done["turn"]["id"]
        listed = await client.request("conversation/list", {})
        assert [c["conversationId"] for c in listed["conversations"]] == [cid]


async def test_whole_conversation_methods_are_refused_on_a_subagent_thread(
    daemon_factory: Factory,
) -> None:
    """Archive, rename, fork, rollback and compact act on a whole conversation in OpenVaala: on
    a subagent's thread they are refused, naming the thread (compact: a turn that says so), and
    the conversation is untouched (they used to archive, rename or compact the conversation
    around it)."""
    daemon = daemon_factory(demo_config())
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        await run_turn(codex, thread, "spawn: say hi")
        [child] = (await codex.request("thread/list", {"parentThreadId": thread}))["data"]
        calls: list[tuple[str, dict[str, object]]] = [
            ("thread/archive", {}),
            ("thread/unarchive", {}),
            ("thread/name/set", {"name": "renamed"}),
            ("thread/fork", {}),
            ("thread/rollback", {"numTurns": 1}),
        ]
        for method, params in calls:
            answer = await codex.call(method, {"threadId": child["id"], **params})
            assert answer["error"]["code"] == -32602, (method, answer)
            assert answer["error"]["data"]["param"] == "threadId", (method, answer)
            assert "its conversation's thread" in answer["error"]["message"], (method, answer)
        # Compact is answered (the Codex TUI exits on a failed one) by a turn of the
        # subagent's thread that says why nothing was compacted.
        mark = len(codex.notes)
        assert await codex.request("thread/compact/start", {"threadId": child["id"]}) == {}
        done = await codex.wait_for(
            "turn/completed", lambda p: p["threadId"] == child["id"], after=mark
        )
        assert done["turn"]["status"] == "completed"
        [warning] = codex.after(mark, "warning")
        assert warning["threadId"] == child["id"] and "Not compacted" in warning["message"]
        async with await daemon.client() as client:
            [conversation] = (await client.request("conversation/list", {}))["conversations"]
            page = await client.request(
                "conversation/read", {"conversationId": thread.replace("-", "")}
            )
        assert conversation["title"] == "spawn: say hi" and not conversation["archived"]
        assert not [i for i in page["items"] if i["type"] == "summary"]
    finally:
        await codex.close()
