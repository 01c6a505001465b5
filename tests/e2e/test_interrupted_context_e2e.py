"""After the user interrupts, the next model call tells the model what was cut short: the tool
result of the command that was stopped and the partial answer are marked as interrupted. Through
the real daemon, for each wire format, with the provider faked at the wire."""

from __future__ import annotations

from typing import Any

from openvaala_server.client import Client
from openvaala_server.models.http import INTERRUPTED_MARK
from tests.fakes import FakeProvider, Reply
from tests.fakes.script import Gate
from tests.fakes.wire import ANTHROPIC, CHAT
from tests.support.daemon import Daemon
from tests.support.events import collect_until, completed_items, new_conversation, turn_ended


async def _start(daemon_factory: Any, fake: FakeProvider) -> tuple[Client, str]:
    config = fake.config_toml("fake") + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\n'
    d: Daemon = daemon_factory(config=config)
    client = await d.client()
    return client, await new_conversation(client, str(d.workdir))


async def _send(client: Client, cid: str, text: str) -> None:
    await client.request("input/send", {"conversationId": cid, "text": text, "mode": "queue"})


def _tool_outputs(fake: FakeProvider, body: dict[str, Any]) -> list[str]:
    if fake.wire == CHAT:
        return [m["content"] for m in body["messages"] if m["role"] == "tool"]
    if fake.wire == ANTHROPIC:
        blocks = [b for m in body["messages"] if m["role"] == "user" for b in m["content"]]
        return [b["content"] for b in blocks if b["type"] == "tool_result"]
    return [i["output"] for i in body["input"] if i.get("type") == "function_call_output"]


def _answers(fake: FakeProvider, body: dict[str, Any]) -> list[str]:
    if fake.wire == CHAT:
        return [m["content"] for m in body["messages"] if m["role"] == "assistant"]
    if fake.wire == ANTHROPIC:
        blocks = [b for m in body["messages"] if m["role"] == "assistant" for b in m["content"]]
        return [b["text"] for b in blocks if b["type"] == "text"]
    messages = [i for i in body["input"] if i.get("role") == "assistant"]
    return [part["text"] for m in messages for part in m["content"]]


async def test_the_model_is_told_which_tool_call_was_interrupted(
    daemon_factory: Any, fake_provider: FakeProvider
) -> None:
    client, cid = await _start(daemon_factory, fake_provider)
    fake_provider.enqueue(
        Reply().tool_call("shell", {"command": "echo started; sleep 300"}),
        Reply().text("Stopped it."),
    )
    await _send(client, cid, "run the slow thing")
    await collect_until(
        client, lambda n: n["method"] == "item/delta" and n["params"]["field"] == "output"
    )
    await client.request("turn/interrupt", {"conversationId": cid})
    notes = await collect_until(client, turn_ended())
    [result] = completed_items(notes, "tool_result")
    assert result["status"] == "interrupted"
    await _send(client, cid, "why did it stop?")
    await collect_until(client, turn_ended())
    body = fake_provider.requests[-1].json
    assert _tool_outputs(fake_provider, body) == ["started\n" + INTERRUPTED_MARK]
    await client.close()


async def test_the_model_is_told_its_answer_was_cut_short(
    daemon_factory: Any, fake_provider: FakeProvider
) -> None:
    client, cid = await _start(daemon_factory, fake_provider)
    gate = Gate()
    fake_provider.enqueue(
        Reply().text("The first half of a lon").wait(gate).text("g answer."),
        Reply().text("Shorter then."),
    )
    await _send(client, cid, "tell me everything")
    assert await gate.wait_reached()
    await collect_until(
        client, lambda n: n["method"] == "item/delta" and "lon" in n["params"]["delta"]
    )
    await client.request("turn/interrupt", {"conversationId": cid})
    notes = await collect_until(client, turn_ended())
    gate.open()
    [answer] = completed_items(notes, "agent_message")
    assert answer["status"] == "interrupted"
    await _send(client, cid, "shorter please")
    await collect_until(client, turn_ended())
    body = fake_provider.requests[-1].json
    assert _answers(fake_provider, body) == ["The first half of a lon\n" + INTERRUPTED_MARK]
    await client.close()
