"""Interrupting a turn with tool calls in flight, through the real daemon: every call the model
asked for ends with a result marked interrupted — the one that ran, the one that had not started,
and one whose arguments were still streaming — on disk (read back after a restart) and in the
clients' `item/completed`; the next request pairs each call with its result."""

from __future__ import annotations

from typing import Any

from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.support.daemon import Daemon
from tests.support.events import (
    collect_until,
    completed_items,
    new_conversation,
    run_turn,
    tool_started,
    turn_ended,
)


def _config(fake: FakeProvider) -> str:
    return (
        fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "test"\nmodel = "fake"\napproval = "never"\n'
    )


async def _items(client: Client, cid: str) -> list[dict[str, Any]]:
    read = await client.request("conversation/read", {"conversationId": cid})
    items: list[Any] = read["items"]
    return items


def _tool_messages(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


async def test_a_call_that_had_not_started_gets_an_interrupted_result(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    wait = f"while [ ! -f {d.workdir / 'never'} ]; do sleep 0.05; done"
    fake_openai.enqueue(
        Reply()
        .tool_call("shell", {"command": wait}, call_id="call_first")
        .tool_call("shell", {"command": "echo second > second.txt"}, call_id="call_second"),
        Reply().text("next turn"),
    )
    await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
    await collect_until(client, tool_started)
    await client.request("turn/interrupt", {"conversationId": cid})
    notes = await collect_until(client, turn_ended())
    results = {r["callId"]: r for r in completed_items(notes, "tool_result")}
    assert set(results) == {"call_first", "call_second"}
    assert all(r["status"] == "interrupted" for r in results.values())
    assert "did not run" in results["call_second"]["output"] and results["call_second"]["isError"]
    assert not (d.workdir / "second.txt").exists()

    await client.close()
    d.restart()  # on disk: read back by a new daemon
    client = await d.client()
    await client.subscribe(cid)
    items = await _items(client, cid)
    on_disk = {i["callId"]: i["status"] for i in items if i["type"] == "tool_result"}
    assert on_disk == {"call_first": "interrupted", "call_second": "interrupted"}
    await run_turn(client, cid, "again")
    sent = _tool_messages(fake_openai.requests[-1].json)
    assert "did not run" in sent["call_second"]
    await client.close()


async def test_a_call_whose_arguments_were_streaming_is_kept_with_an_interrupted_result(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    writing = Gate()
    fake_openai.enqueue(
        Reply()
        .text("Let me look.")
        .tool_call("shell", {"command": "echo never"}, call_id="call_cut", pause=writing),
        Reply().text("next turn"),
    )
    try:
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
        await writing.wait_reached()
        await client.request("turn/interrupt", {"conversationId": cid})
        notes = await collect_until(client, turn_ended())
    finally:
        writing.open()
    [call] = completed_items(notes, "tool_call")
    [result] = completed_items(notes, "tool_result")
    assert call["callId"] == result["callId"] == "call_cut" and call["name"] == "shell"
    assert call["status"] == result["status"] == "interrupted"
    assert "did not run" in result["output"] and result["isError"]
    items = await _items(client, cid)
    kinds = [(i["type"], i["status"]) for i in items]
    assert ("tool_call", "interrupted") in kinds and ("tool_result", "interrupted") in kinds
    await run_turn(client, cid, "again")
    assert "did not run" in _tool_messages(fake_openai.requests[-1].json)["call_cut"]
    await client.close()
