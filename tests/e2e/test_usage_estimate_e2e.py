"""The usage a client sees before the provider reports: the whole request is estimated — the
system prompt and the tool schemas from the first message on — and, for openai_responses, the
reasoning the provider keeps by the mode it applied, the same after a restart as before it.
Through the real daemon, with the provider faked at the wire."""

from __future__ import annotations

from typing import Any

from openvaala_server.client import Client
from openvaala_server.domain.usage import estimate_text
from tests.fakes import FakeProvider, Reply
from tests.fakes.script import Gate
from tests.support.daemon import Daemon
from tests.support.events import collect_until, new_conversation, turn_ended

INSTRUCTIONS = "Follow the house rules. " * 200  # about 1200 tokens


def _config(fake: FakeProvider, **model: Any) -> str:
    return (
        fake.config_toml("fake", **model)
        + fake.config_toml("other", **model)
        + "\n[agents.default]\n"
        + 'description = "t"\nmodel = "fake"\ntools = ["shell", "read_file"]\n'
        + f'instructions = "{INSTRUCTIONS}"\n'
    )


async def _usage(client: Client, cid: str) -> Any:
    usage: Any = await client.request("conversation/usage", {"conversationId": cid})
    return usage


async def test_the_first_message_is_counted_with_system_prompt_and_tools(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    fresh = await _usage(client, cid)
    assert fresh["source"] == "estimated"
    # The system prompt alone is about 1200 tokens; the two tools' schemas come on top.
    assert fresh["used"] > estimate_text(INSTRUCTIONS) + 100
    gate = Gate()
    fake_openai.enqueue(Reply().wait(gate).text("hi").usage(5000, 2))
    await client.request(
        "input/send", {"conversationId": cid, "text": "hello there", "mode": "queue"}
    )
    assert await gate.wait_reached()
    first = await _usage(client, cid)  # the message is in, the provider has not reported yet
    assert first["source"] == "estimated" and first["used"] > fresh["used"]
    gate.open()
    await collect_until(client, turn_ended())
    await client.close()


async def test_set_model_does_not_change_the_estimate_of_the_same_request(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    before = await _usage(client, cid)
    await client.request("conversation/setModel", {"conversationId": cid, "model": "other"})
    after = await _usage(client, cid)
    assert after == before
    await client.close()


async def test_the_estimate_after_a_restart_matches_the_one_before(
    daemon_factory: Any, fake_responses: FakeProvider
) -> None:
    # Asked for all_turns, the provider applies current_turn: only the current turn's
    # reasoning is in its context, and the estimate must keep knowing that after a restart.
    d: Daemon = daemon_factory(config=_config(fake_responses, reasoning_context="all_turns"))
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    for turn in range(2):
        fake_responses.enqueue(
            Reply()
            .reasoning("t" * 4000, opaque=f"E{turn}")
            .text(f"answer {turn}")
            .reasoning_context("current_turn")
        )
        await client.request(
            "input/send", {"conversationId": cid, "text": f"question {turn}", "mode": "queue"}
        )
        await collect_until(client, turn_ended())
    # A full estimate now (setModel recomputes it), with the mode the provider reported.
    await client.request("conversation/setModel", {"conversationId": cid, "model": "fake"})
    before = await _usage(client, cid)
    assert before["source"] == "estimated"
    await client.close()
    d.restart()
    client = await d.client()
    await client.subscribe(cid)
    after = await _usage(client, cid)
    assert after == before
    await client.close()
