"""Compaction and fork in-process: the summary replaces the older history for the model; a fork
is a new conversation with the history up to an item."""

from __future__ import annotations

import asyncio

import pytest

from openvaala_server import errors
from openvaala_server.models.base import ModelError, TextDelta
from tests.server.runtime.conftest import Core


async def test_manual_compaction_summarizes_and_the_model_then_sees_the_summary(
    core: Core,
) -> None:
    conv, events = await core.new()
    core.script.text("One.")
    await core.turn(conv, "first")
    core.script.text("Two.")
    await core.turn(conv, "second")

    core.script.text("The user said first and second.")
    result = await core.runtime.compact_now(conv.conversation_id)

    assert result["compacted"] is True
    compaction = core.script.requests[2]
    assert compaction.purpose == "compaction"
    assert "first" in [i.get("text") for i in compaction.items]
    summary = events.of("item/completed")[-1]["params"]["item"]
    assert (summary["type"], summary["itemId"]) == ("summary", result["summaryItemId"])
    assert summary["text"] == "The user said first and second."

    core.script.text("Three.")
    await core.turn(conv, "third")
    sent = core.script.requests[3].items
    assert sent[0]["type"] == "summary"
    assert "first" not in [i.get("text") for i in sent]  # covered by the summary
    assert sent[-1]["text"] == "third"


async def test_compaction_of_a_short_history_does_nothing(core: Core) -> None:
    conv, _events = await core.new()
    assert (await core.runtime.compact_now(conv.conversation_id))["compacted"] is False
    assert core.script.calls == []


async def test_a_full_context_is_compacted_before_the_next_call(core: Core) -> None:
    conv, events = await core.new()
    # About 3,000 tokens each (the window is 8,000, compaction at 6,400): the second message
    # takes the context past the threshold, and is itself enough to keep after the cut.
    core.script.reply(TextDelta("Short reply."), usage=(3500, 10))  # as the provider counted
    await core.turn(conv, "first " + "word " * 2400)

    core.script.text("Summary of first.")
    core.script.text("Answer.")
    ended = await core.turn(conv, "second " + "word " * 2400)

    assert ended["params"]["status"] == "completed"
    assert [n["params"]["reason"] for n in events.of("compaction/started")] == ["auto"]
    purposes = [request.purpose for request in core.script.requests]
    assert purposes == ["turn", "compaction", "turn"]
    assert core.script.requests[2].items[0]["type"] == "summary"


async def test_fork_copies_the_history_up_to_an_item(core: Core) -> None:
    conv, _events = await core.new()
    core.script.text("One.")
    await core.turn(conv, "first")
    core.script.text("Two.")
    await core.turn(conv, "second")
    first_answer = next(i for i in conv.root.items if i.get("text") == "One.")

    result = await core.runtime.fork(conv.conversation_id, first_answer["itemId"])

    info = result["conversation"]
    assert info["conversationId"] != conv.conversation_id
    read = await core.runtime.read(info["conversationId"], None, None, 50)
    assert [i.get("text") for i in read["items"]] == ["first", "One."]
    # The fork is a conversation of its own: a turn there leaves the original alone.
    fork = await core.runtime.open(info["conversationId"])
    core.watch(fork)
    core.script.text("Other.")
    await core.turn(fork, "another way")
    assert [i.get("text") for i in core.script.requests[-1].items] == [
        "first",
        "One.",
        "another way",
    ]
    original = await core.runtime.read(conv.conversation_id, None, None, 50)
    assert len(original["items"]) == 4


async def test_rewind_to_a_message_forks_before_it_and_gives_its_text_back(core: Core) -> None:
    conv, _events = await core.new()
    core.script.text("One.")
    await core.turn(conv, "first")
    core.script.text("Two.")
    await core.turn(conv, "second")
    second = next(i for i in conv.root.items if i.get("text") == "second")

    result = await core.runtime.rewind(conv.conversation_id, second["itemId"])

    assert result["composerText"] == "second"
    new_id = result["conversation"]["conversationId"]
    read = await core.runtime.read(new_id, None, None, 50)
    assert [i.get("text") for i in read["items"]] == ["first", "One."]
    tree = await core.store.fork_summaries()
    assert [(s["conversationId"], s["forkedFrom"]["kind"]) for s in tree] == [(new_id, "rewind")]


async def test_a_failed_compaction_changes_nothing(core: Core) -> None:
    conv, events = await core.new()
    core.script.text("One.")
    await core.turn(conv, "first")
    core.script.text("Two.")
    await core.turn(conv, "second")
    before = list(conv.root.items)

    core.script.fail(ModelError("auth_failed", "check the key"))
    with pytest.raises(errors.CompactionFailed, match="check the key"):
        await core.runtime.compact_now(conv.conversation_id)

    [failed] = events.of("compaction/failed")
    assert failed["params"]["error"]["kind"] == "auth_failed"
    assert conv.root.items == before
    saved = await core.store.read_all_items(conv.conversation_id, conv.root_session_id)
    assert "summary" not in [i["type"] for i in saved]


async def test_a_temporary_compaction_failure_is_retried(core: Core) -> None:
    conv, events = await core.new()
    core.script.text("One.")
    await core.turn(conv, "first")
    core.script.text("Two.")
    await core.turn(conv, "second")

    core.script.fail(ModelError("provider_unavailable", "busy", retryable=True))
    core.script.text("Summary.")
    result = await core.runtime.compact_now(conv.conversation_id)

    assert result["compacted"] is True
    assert len(events.of("retry/scheduled")) == 1


async def test_interrupting_a_manual_compaction(core: Core) -> None:
    conv, events = await core.new()
    core.script.text("One.")
    await core.turn(conv, "first")
    core.script.text("Two.")
    await core.turn(conv, "second")

    core.script.hold("Summ")
    compaction = asyncio.create_task(core.runtime.compact_now(conv.conversation_id))
    await events.until(lambda note: note["method"] == "compaction/started")
    assert await core.runtime.interrupt(conv.conversation_id, None) == {"interrupted": True}

    assert await compaction == {"compacted": False, "reason": "interrupted"}
    assert core.script.calls[-1].cancelled
    assert events.of("compaction/failed")[-1]["params"]["error"]["kind"] == "interrupted"
