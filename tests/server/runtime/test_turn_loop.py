"""The turn loop in-process: text, a tool call and its result, retries, a failure."""

from __future__ import annotations

from openvaala_server.models.base import ModelError
from tests.server.runtime.conftest import Core


async def test_text_turn_streams_and_is_saved(core: Core) -> None:
    conv, events = await core.new()
    core.script.text("Hello", ", world")
    ended = await core.turn(conv, "hi")

    assert ended["params"]["status"] == "completed"
    completed = [n["params"]["item"] for n in events.of("item/completed")]
    assert [(i["type"], i.get("text")) for i in completed] == [
        ("user_message", "hi"),
        ("agent_message", "Hello, world"),
    ]
    deltas = [n["params"]["delta"] for n in events.of("item/delta")]
    assert "".join(deltas) == "Hello, world"
    # What the model was sent, and what the store now holds.
    [request] = core.script.requests
    assert request.items[-1]["text"] == "hi"
    saved = await core.store.read_all_items(conv.conversation_id, conv.root_session_id)
    assert [i["type"] for i in saved] == ["user_message", "agent_message"]


async def test_tool_call_runs_and_its_result_goes_back_to_the_model(core: Core) -> None:
    (core.cwd / "notes.txt").write_text("the secret is 42\n")
    conv, events = await core.new()
    call_id = core.script.tool_call("read_file", {"path": "notes.txt"}, text="Reading.")
    core.script.text("It says 42.")
    ended = await core.turn(conv, "what is in notes.txt?")

    assert ended["params"]["status"] == "completed"
    types = [n["params"]["item"]["type"] for n in events.of("item/completed")]
    assert types == ["user_message", "agent_message", "tool_call", "tool_result", "agent_message"]
    # The second call carries the call and its result, paired by id.
    second = core.script.requests[1].items
    result = next(i for i in second if i["type"] == "tool_result")
    assert result["callId"] == call_id
    assert "the secret is 42" in str(result["output"])
    assert not result.get("isError")


async def test_a_temporary_failure_is_retried(core: Core) -> None:
    conv, events = await core.new()
    core.script.fail(ModelError("provider_unavailable", "busy", retryable=True))
    core.script.text("Back.")
    ended = await core.turn(conv, "hi")

    assert ended["params"]["status"] == "completed"
    assert len(events.of("retry/scheduled")) == 1
    assert len(core.script.calls) == 2
    last = events.of("item/completed")[-1]["params"]["item"]
    assert last["text"] == "Back."


async def test_a_permanent_failure_ends_the_turn_failed(core: Core) -> None:
    conv, events = await core.new()
    core.script.fail(ModelError("auth_failed", "check the key"), "partial")
    ended = await core.turn(conv, "hi")

    assert ended["params"]["status"] == "failed"
    assert ended["params"]["error"]["kind"] == "auth_failed"
    assert not events.of("retry/scheduled")
    # What the failed call streamed is withdrawn; a notice says why the turn stopped.
    assert len(events.of("item/discarded")) == 1
    saved = await core.store.read_all_items(conv.conversation_id, conv.root_session_id)
    assert [i["type"] for i in saved] == ["user_message", "notice"]
    assert saved[-1]["errorKind"] == "auth_failed"
    assert "check the key" in saved[-1]["text"]


async def test_retries_give_up_after_max_retries(core: Core) -> None:
    conv, _events = await core.new()
    for _ in range(3):  # the first call and max_retries = 2 retries
        core.script.fail(ModelError("provider_unavailable", "busy", retryable=True))
    ended = await core.turn(conv, "hi")

    assert ended["params"]["status"] == "failed"
    assert ended["params"]["error"]["kind"] == "provider_unavailable"
    assert len(core.script.calls) == 3


async def test_reasoning_is_an_item(core: Core) -> None:
    conv, events = await core.new()
    core.script.thinking("Let me think.", "Done.")
    await core.turn(conv, "hi")

    items = [n["params"]["item"] for n in events.of("item/completed")]
    assert [(i["type"], i.get("text")) for i in items[1:]] == [
        ("reasoning", "Let me think."),
        ("agent_message", "Done."),
    ]
