"""Interrupting a turn in-process: the model call is cancelled, what streamed is kept."""

from __future__ import annotations

from tests.server.runtime.conftest import Core


async def test_interrupt_cancels_the_call_and_keeps_the_partial_answer(core: Core) -> None:
    conv, events = await core.new()
    core.script.hold("Half an ")
    await core.send(conv, "write an essay")
    await events.until(lambda note: note["method"] == "item/delta")

    assert await core.runtime.interrupt(conv.conversation_id, None) == {"interrupted": True}
    [ended] = await events.turns_ended()

    assert ended["params"]["status"] == "interrupted"
    assert core.script.calls[0].cancelled
    saved = await core.store.read_all_items(conv.conversation_id, conv.root_session_id)
    agent = [i for i in saved if i["type"] == "agent_message"]
    assert [(i["text"], i["status"]) for i in agent] == [("Half an ", "interrupted")]
    # The next turn's model sees the cut-off answer and a note that the user interrupted.
    core.script.text("Sorry.")
    await core.turn(conv, "go on")
    sent = core.script.requests[1].items
    assert [i["type"] for i in sent] == [
        "user_message",
        "agent_message",
        "notice",
        "user_message",
    ]


async def test_interrupt_when_idle_says_so(core: Core) -> None:
    conv, _events = await core.new()
    assert await core.runtime.interrupt(conv.conversation_id, None) == {"interrupted": False}
