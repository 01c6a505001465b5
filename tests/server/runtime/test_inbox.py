"""Inbox wiring in-process: input that arrives while a turn runs (steer, queue, jump), and the
operations on a waiting input (docs/protocol.md, input/*)."""

from __future__ import annotations

import asyncio

import pytest

from openvaala_server import errors
from openvaala_server.domain.records import Item
from openvaala_server.models.base import TextDelta, ToolCallRequested
from tests.server.runtime.conftest import Core, Events


def user_texts(items: list[Item]) -> list[str]:
    return [item.get("text", "") for item in items if item.get("type") == "user_message"]


def held_tool_step(core: Core) -> asyncio.Event:
    """Script a reply that streams, waits for the returned gate, then calls read_file (a
    model-call boundary follows, where steering input is read)."""
    gate = asyncio.Event()
    call = ToolCallRequested("call_held", "read_file", {"path": "a.txt"}, '{"path": "a.txt"}')
    core.script.reply(TextDelta("Looking."), gate, call)
    return gate


async def streaming(events: Events) -> None:
    await events.until(lambda note: note["method"] == "item/delta")


async def test_steer_joins_the_running_turn_at_the_next_model_call(core: Core) -> None:
    (core.cwd / "a.txt").write_text("A")
    conv, events = await core.new()
    gate = held_tool_step(core)
    core.script.text("Both done.")
    assert (await core.send(conv, "read a"))["disposition"] == "started"
    await streaming(events)

    steered = await core.send(conv, "and say hi", mode="steer")
    assert steered["disposition"] == "steering"
    gate.set()
    [ended] = await events.turns_ended()

    assert ended["params"]["status"] == "completed"
    assert len(core.script.calls) == 2  # one turn, two model calls
    assert user_texts(core.script.requests[1].items) == ["read a", "and say hi"]


async def test_queued_input_starts_the_next_turn(core: Core) -> None:
    conv, events = await core.new()
    gate = core.script.hold("First")
    core.script.text("Second answer.")
    await core.send(conv, "first")
    await streaming(events)

    queued = await core.send(conv, "second", mode="queue")
    assert queued["disposition"] == "queued"
    inbox = events.of("inbox/updated")[-1]["params"]
    assert [i["text"] for i in inbox["inputs"]] == ["second"]
    gate.set()
    first, second = await events.turns_ended(2)

    assert [first["params"]["status"], second["params"]["status"]] == ["completed", "completed"]
    assert user_texts(core.script.requests[1].items) == ["first", "second"]


async def test_jump_interrupts_the_turn_and_goes_next(core: Core) -> None:
    conv, events = await core.new()
    core.script.hold("Slow")
    core.script.text("Urgent answer.")
    await core.send(conv, "slow task")
    await streaming(events)

    jumped = await core.send(conv, "urgent", mode="jump")
    assert jumped["disposition"] == "jumped"
    first, second = await events.turns_ended(2)

    assert first["params"]["status"] == "interrupted"
    assert second["params"]["status"] == "completed"
    assert core.script.calls[0].cancelled
    assert user_texts(core.script.requests[1].items) == ["slow task", "urgent"]


async def test_a_queued_input_can_be_steered_into_the_turn(core: Core) -> None:
    (core.cwd / "a.txt").write_text("A")
    conv, events = await core.new()
    gate = held_tool_step(core)
    core.script.text("Done.")
    await core.send(conv, "read a")
    await streaming(events)

    queued = await core.send(conv, "later", mode="queue")
    core.runtime.steer_input(queued["inputId"])
    gate.set()
    await events.turns_ended()

    assert user_texts(core.script.requests[1].items) == ["read a", "later"]
    assert len(events.of("turn/ended")) == 1


async def test_a_queued_input_can_jump(core: Core) -> None:
    conv, events = await core.new()
    core.script.hold("Slow")
    core.script.text("Now.")
    await core.send(conv, "slow")
    await streaming(events)

    queued = await core.send(conv, "now", mode="queue")
    core.runtime.jump_input(queued["inputId"])
    first, second = await events.turns_ended(2)

    assert (first["params"]["status"], second["params"]["status"]) == ("interrupted", "completed")


async def test_edit_and_withdraw_a_waiting_input(core: Core) -> None:
    conv, events = await core.new()
    gate = core.script.hold("Busy")
    await core.send(conv, "first")
    await streaming(events)

    queued = await core.send(conv, "draft", mode="queue")
    core.runtime.edit_input(queued["inputId"], "final")
    assert core.runtime.withdraw_input(queued["inputId"]) == {"text": "final"}
    with pytest.raises(errors.InputConsumed):
        core.runtime.withdraw_input(queued["inputId"])
    gate.set()
    await events.turns_ended()

    assert len(core.script.calls) == 1  # nothing else ran
    assert events.of("inbox/updated")[-1]["params"]["inputs"] == []
