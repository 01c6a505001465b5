"""Conversation lifecycle through the real daemon: create, first message, titles, rename,
archive, delete, working directory checks, and what survives a restart."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from openvaala_server.client import RpcError
from tests.support.daemon import Daemon
from tests.support.events import (
    collect_until,
    completed_items,
    new_conversation,
    run_turn,
    snapshot_of,
    tool_started,
    turn_ended,
)


async def test_a_turn_streams_and_is_saved(daemon: Daemon) -> None:
    client = await daemon.client()
    cid = await new_conversation(client, str(daemon.workdir))
    notes = await run_turn(client, cid, "hello there")
    methods = [n["method"] for n in notes]
    assert "turn/started" in methods and "item/delta" in methods
    assert notes[-1]["params"]["status"] == "completed"
    [user] = completed_items(notes, "user_message")
    [answer] = completed_items(notes, "agent_message")
    assert user["text"] == "hello there"
    deltas = "".join(n["params"]["delta"] for n in notes if n["method"] == "item/delta")
    assert deltas == answer["text"] and "hello there" in answer["text"]
    page = await client.request("conversation/read", {"conversationId": cid})
    assert [i["type"] for i in page["items"]] == ["user_message", "agent_message"]
    await client.close()


async def test_tool_call_runs_in_the_working_directory(daemon: Daemon) -> None:
    (daemon.workdir / "marker.txt").write_text("x")
    client = await daemon.client()
    cid = await new_conversation(client, str(daemon.workdir))
    notes = await run_turn(client, cid, "run: ls")
    [call] = completed_items(notes, "tool_call")
    [result] = completed_items(notes, "tool_result")
    assert call["name"] == "shell" and result["callId"] == call["callId"]
    assert "marker.txt" in result["output"]
    streamed = "".join(
        n["params"]["delta"]
        for n in notes
        if n["method"] == "item/delta" and n["params"]["field"] == "output"
    )
    assert "marker.txt" in streamed
    assert "marker.txt" in completed_items(notes, "agent_message")[-1]["text"]
    await client.close()


async def test_empty_conversation_is_never_written(daemon: Daemon) -> None:
    client = await daemon.client()
    await new_conversation(client, str(daemon.workdir))
    assert (await client.request("conversation/list"))["conversations"] == []
    assert list((daemon.home / "conversations").iterdir()) == []
    await client.close()


async def test_auto_title_then_rename(daemon: Daemon) -> None:
    client = await daemon.client()
    cid = await new_conversation(client, str(daemon.workdir))
    first = "Please look at the failing build in the payments service\nsecond line"
    await run_turn(client, cid, first)
    [row] = (await client.request("conversation/list"))["conversations"]
    assert row["title"] == "Please look at the failing build in the…"
    assert len(row["title"]) == 40
    await client.request("conversation/rename", {"conversationId": cid, "title": "Payments"})
    [row] = (await client.request("conversation/list"))["conversations"]
    assert row["title"] == "Payments"
    await run_turn(client, cid, "another message")
    [row] = (await client.request("conversation/list"))["conversations"]
    assert row["title"] == "Payments"
    await client.close()


async def test_archive_hides_from_the_default_list(daemon: Daemon) -> None:
    client = await daemon.client()
    cid = await new_conversation(client, str(daemon.workdir))
    await run_turn(client, cid, "keep me")
    await client.request("conversation/archive", {"conversationId": cid})
    assert (await client.request("conversation/list"))["conversations"] == []
    archived = (await client.request("conversation/list", {"archived": True}))["conversations"]
    assert [c["conversationId"] for c in archived] == [cid]
    await client.request("conversation/unarchive", {"conversationId": cid})
    assert len((await client.request("conversation/list"))["conversations"]) == 1
    await client.close()


async def test_search_finds_message_text(daemon: Daemon) -> None:
    client = await daemon.client()
    for text in ("the zebra crossing", "an aardvark"):
        cid = await new_conversation(client, str(daemon.workdir))
        await run_turn(client, cid, text)
    found = (await client.request("conversation/list", {"search": "zebra"}))["conversations"]
    assert [c["title"] for c in found] == ["the zebra crossing"]
    await client.close()


async def test_delete_is_refused_while_a_turn_runs(daemon_factory: object) -> None:
    d: Daemon = daemon_factory(config='[models.demo]\nprovider = "demo"\npace_ms = 50\n')  # type: ignore[operator]
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    await client.request(
        "input/send", {"conversationId": cid, "text": "run: sleep 5", "mode": "queue"}
    )
    with pytest.raises(RpcError) as err:
        await client.request("conversation/delete", {"conversationId": cid})
    assert err.value.kind == "turn_running"
    await client.request("turn/interrupt", {"conversationId": cid})
    await collect_until(client, turn_ended())
    await client.request("conversation/delete", {"conversationId": cid})
    assert (await client.request("conversation/list"))["conversations"] == []
    assert not (d.home / "conversations" / cid).exists()
    with pytest.raises(RpcError) as err:
        await client.request("conversation/read", {"conversationId": cid})
    assert err.value.kind == "not_found"
    await client.close()


async def test_missing_working_directory(daemon: Daemon) -> None:
    client = await daemon.client()
    work = daemon.workdir / "project"
    work.mkdir()
    cid = await new_conversation(client, str(work))
    await run_turn(client, cid, "first")
    shutil.rmtree(work)
    with pytest.raises(RpcError) as err:
        await client.request(
            "input/send", {"conversationId": cid, "text": "again", "mode": "queue"}
        )
    assert err.value.kind == "cwd_missing" and str(work) in err.value.message
    # It still reads.
    page = await client.request("conversation/read", {"conversationId": cid})
    assert len(page["items"]) == 2
    with pytest.raises(RpcError) as err:
        await client.request("conversation/create", {"cwd": str(work)})
    assert err.value.kind == "cwd_missing"
    await client.close()


async def test_restart_keeps_everything(daemon: Daemon) -> None:
    client = await daemon.client()
    cid = await new_conversation(client, str(daemon.workdir))
    await run_turn(client, cid, "remember this")
    before = await client.request("conversation/read", {"conversationId": cid})
    listed = await client.request("conversation/list")
    await client.close()
    daemon.restart()
    client = await daemon.client()
    assert await client.request("conversation/read", {"conversationId": cid}) == before
    after = await client.request("conversation/list")
    assert after == listed
    await client.close()


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_a_turn_cut_by_a_stop_shows_interrupted(daemon_factory: object, how: str) -> None:
    d: Daemon = daemon_factory(config='[models.demo]\nprovider = "demo"\npace_ms = 50\n')  # type: ignore[operator]
    client = await d.client(reconnect=False)
    cid = await new_conversation(client, str(d.workdir))
    await client.request(
        "input/send", {"conversationId": cid, "text": "run: sleep 30", "mode": "queue"}
    )
    await collect_until(
        client,
        tool_started,
    )
    await client.close()
    if how == "stop":
        assert d.cli("serve", "stop").returncode == 0
        assert d.process is not None and d.process.wait(10) == 0  # a clean exit
        d.process = None
    else:
        d.kill()
    d.start()
    client = await d.client()
    [row] = (await client.request("conversation/list"))["conversations"]
    assert row["status"] == "interrupted"
    items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
    if how == "stop":  # a graceful stop saves what the turn had, marked interrupted
        assert items[-1]["type"] == "tool_result" and items[-1]["status"] == "interrupted"
    await client.close()


async def test_unwatched_conversations_are_unloaded_and_come_back_intact(
    daemon_factory: object,
) -> None:
    config = '[models.demo]\nprovider = "demo"\npace_ms = 0\n[server]\nloaded_conversations = 2\n'
    d: Daemon = daemon_factory(config=config)  # type: ignore[operator]
    client = await d.client()
    seen: dict[str, tuple[int, list[Any]]] = {}
    for n in range(4):
        cid = await new_conversation(client, str(d.workdir))
        await run_turn(client, cid, f"conversation {n}")
        seq = client.last_seq[cid]
        await client.unsubscribe(cid)
        items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
        seen[cid] = (seq, items)
    for cid, (_seq, items) in seen.items():
        page = await client.request("conversation/read", {"conversationId": cid})
        assert page["items"] == items
    # The first one was unloaded: resuming from its old seq gets a fresh snapshot, not a replay.
    first = next(iter(seen))
    result = await client.subscribe(first, after_seq=seen[first][0])
    assert result["snapshot"] is not None
    assert [i["itemId"] for i in result["snapshot"]["sessions"][0]["items"]] == [
        i["itemId"] for i in seen[first][1]
    ]
    await run_turn(client, first, "still works")
    await client.close()


async def test_a_long_conversation_opens_from_its_last_page_and_keeps_everything(
    daemon: Daemon,
) -> None:
    client = await daemon.client()
    cid = await new_conversation(client, str(daemon.workdir))
    for n in range(60):
        await run_turn(client, cid, f"message {n}")
    usage_before = await client.request("conversation/usage", {"conversationId": cid})
    await client.close()
    daemon.restart()
    client = await daemon.client()
    snapshot = await snapshot_of(client, cid)
    [root] = snapshot["sessions"]
    assert len(root["items"]) == 100 and root["hasMore"]
    assert root["items"][-1]["type"] == "agent_message"
    everything = await client.request("conversation/read", {"conversationId": cid, "limit": 1000})
    assert len(everything["items"]) == 120 and not everything["hasMore"]
    usage = await client.request("conversation/usage", {"conversationId": cid})
    assert usage["source"] == "estimated" and usage["used"] >= usage_before["used"] * 0.8
    notes = await run_turn(client, cid, "and one more")
    assert notes[-1]["params"]["status"] == "completed"
    await client.close()


async def test_the_list_shows_stored_summaries_and_the_live_status_of_loaded_ones(
    daemon: Daemon,
) -> None:
    client = await daemon.client()
    done = await new_conversation(client, str(daemon.workdir))
    await run_turn(client, done, "finish me")
    await client.close()
    daemon.restart()  # `done` is now only in the index: listed from its stored summary
    client = await daemon.client()
    busy = await new_conversation(client, str(daemon.workdir))
    await client.request("input/send", {"conversationId": busy, "text": "run: sleep 20"})
    await collect_until(client, tool_started)
    listed = (await client.request("conversation/list"))["conversations"]
    rows = {row["conversationId"]: row for row in listed}
    assert rows[busy]["status"] == "running"  # loaded here: its live status
    stored = rows[done]
    assert stored["status"] == "idle"  # its last turn completed
    assert stored["messageCount"] == 2 and stored["turnCount"] == 1
    assert stored["archived"] is False and stored["forkedFrom"] is None
    assert stored["title"] == "finish me" and stored["cwd"] == str(daemon.workdir)
    await client.request("turn/interrupt", {"conversationId": busy})
    await client.close()
