"""The three HTTP providers against the fake server: events out, errors mapped, cancellation."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from openvaala_server.config import ModelConfig
from openvaala_server.models.anthropic import AnthropicProvider
from openvaala_server.models.base import (
    ModelError,
    ModelEvent,
    ModelRequest,
    Provider,
    ReasoningDelta,
    ReasoningDone,
    StreamEnded,
    TextDelta,
    ToolCallRequested,
    ToolSpec,
    UsageReported,
)
from openvaala_server.models.openai_chat import OpenAIChatProvider
from openvaala_server.models.openai_responses import OpenAIResponsesProvider
from tests.fakes import ANTHROPIC, API_KEY_ENV, CHAT, RESPONSES, FakeProvider, Gate, Reply

PROVIDERS: dict[str, Any] = {
    CHAT: OpenAIChatProvider,
    RESPONSES: OpenAIResponsesProvider,
    ANTHROPIC: AnthropicProvider,
}
TOOLS = [ToolSpec("read_file", "Read a file", {"type": "object", "properties": {}})]


def make(fake: FakeProvider, **overrides: Any) -> tuple[Provider, ModelConfig]:
    config = fake.model_config(**overrides)
    return PROVIDERS[fake.wire](config), config


def request(config: ModelConfig, text: str = "hi") -> ModelRequest:
    return ModelRequest(
        model=config,
        instructions="Be brief.",
        items=[{"type": "user_message", "text": text}],
        tools=TOOLS,
    )


async def collect(fake: FakeProvider, **overrides: Any) -> list[ModelEvent]:
    provider, config = make(fake, **overrides)
    return [event async for event in provider.stream(request(config))]


async def failure(fake: FakeProvider, **overrides: Any) -> ModelError:
    with pytest.raises(ModelError) as info:
        await collect(fake, **overrides)
    return info.value


def text_of(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_plain_answer(fake_provider: FakeProvider) -> None:
    fake_provider.enqueue(Reply().text("Hel", "lo", " world").usage(12, 3))
    events = await collect(fake_provider)
    assert [e for e in events if isinstance(e, TextDelta)] == [
        TextDelta("Hel"),
        TextDelta("lo"),
        TextDelta(" world"),
    ]
    usage = [e for e in events if isinstance(e, UsageReported)]
    assert [(u.input_tokens, u.output_tokens) for u in usage] == [(12, 3)]
    assert events[-1] == StreamEnded("stop")


async def test_tool_call(fake_provider: FakeProvider) -> None:
    arguments = {"path": "src/main.py", "limit": 20}
    fake_provider.enqueue(Reply().text("Let me look.").tool_call("read_file", arguments, chunks=4))
    events = await collect(fake_provider)
    calls = [e for e in events if isinstance(e, ToolCallRequested)]
    assert len(calls) == 1
    assert calls[0].name == "read_file"
    assert calls[0].arguments == arguments
    assert calls[0].call_id
    assert events[-1] == StreamEnded("tool_calls")
    assert text_of(events) == "Let me look."


async def test_two_parallel_tool_calls(fake_provider: FakeProvider) -> None:
    fake_provider.enqueue(
        Reply()
        .tool_call("read_file", {"path": "a"}, call_id="call_a")
        .tool_call("list_dir", {"path": "."}, call_id="call_b")
    )
    calls = [e for e in await collect(fake_provider) if isinstance(e, ToolCallRequested)]
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        ("call_a", "read_file", {"path": "a"}),
        ("call_b", "list_dir", {"path": "."}),
    ]
    if fake_provider.wire == RESPONSES:
        assert calls[0].provider_data is not None
        assert calls[0].provider_data["call_id"] == "call_a"
        assert str(calls[0].provider_data["id"]).startswith("fc_")


async def test_unparsable_arguments_are_kept_as_text(fake_provider: FakeProvider) -> None:
    fake_provider.enqueue(Reply().tool_call("read_file", '{"path": "a"', call_id="c1"))
    (call,) = [e for e in await collect(fake_provider) if isinstance(e, ToolCallRequested)]
    assert call.arguments == {}
    assert call.arguments_text == '{"path": "a"'


async def test_reasoning_is_streamed(fake_provider: FakeProvider) -> None:
    fake_provider.enqueue(Reply().reasoning("First, ", "think.", opaque="opaque-1").text("Answer"))
    events = await collect(fake_provider)
    deltas = [e.text for e in events if isinstance(e, ReasoningDelta)]
    assert "".join(deltas) == "First, think."
    (done,) = [e for e in events if isinstance(e, ReasoningDone)]
    assert done.text == "First, think."
    # Reasoning finishes before the answer starts.
    assert events.index(done) < events.index(TextDelta("Answer"))
    if fake_provider.wire == ANTHROPIC:
        assert done.provider_data == {"provider": "anthropic", "signature": "opaque-1"}
    elif fake_provider.wire == RESPONSES:
        assert done.provider_data is not None
        assert done.provider_data["encrypted_content"] == "opaque-1"
        assert str(done.provider_data["id"]).startswith("rs_")


async def test_max_tokens_stop_reason(fake_provider: FakeProvider) -> None:
    fake_provider.enqueue(Reply().text("trunc").stop_reason("max_tokens"))
    events = await collect(fake_provider)
    assert events[-1] == StreamEnded("max_tokens")


# --- errors ----------------------------------------------------------------------------------


async def test_429_is_retryable_with_retry_after(fake_provider: FakeProvider) -> None:
    fake_provider.enqueue(Reply.rate_limited(retry_after=7))
    error = await failure(fake_provider)
    assert (error.kind, error.retryable, error.retry_after) == ("provider_unavailable", True, 7.0)
    assert "429" in error.message


async def test_retry_after_as_http_date(fake_provider: FakeProvider) -> None:
    when = time.time() + 30
    fake_provider.enqueue(Reply.rate_limited(retry_after=_http_date(when)))
    error = await failure(fake_provider)
    assert error.retry_after is not None
    assert 25 <= error.retry_after <= 31


@pytest.mark.parametrize("status", [500, 502, 503, 529])
async def test_server_errors_are_retryable(fake_openai: FakeProvider, status: int) -> None:
    fake_openai.enqueue(Reply.server_error(status))
    error = await failure(fake_openai)
    assert (error.kind, error.retryable) == ("provider_unavailable", True)
    assert str(status) in error.message


async def test_500_each_wire(fake_provider: FakeProvider) -> None:
    fake_provider.enqueue(Reply.server_error())
    error = await failure(fake_provider)
    assert (error.kind, error.retryable) == ("provider_unavailable", True)


async def test_401_is_auth_failed_and_never_leaks_the_key(
    fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fake echoes a wrong key in full in its 401 body, as a worst case provider would.
    secret = "sk-wrong-but-secret-1234567890"
    monkeypatch.setenv(API_KEY_ENV, secret)
    error = await failure(fake_provider)
    assert (error.kind, error.retryable) == ("auth_failed", False)
    assert API_KEY_ENV in error.message
    assert "401" in error.message
    for text in (error.message, str(error), repr(error), repr(error.args)):
        assert secret not in text
    assert "[redacted]" in error.message  # the provider's own words are kept, minus the key


async def test_scripted_401_message_is_friendly(fake_openai: FakeProvider) -> None:
    fake_openai.enqueue(Reply.unauthorized())
    provider, config = make(fake_openai, base_url=fake_openai.base_url())
    with pytest.raises(ModelError) as info:
        [e async for e in provider.stream(request(config))]
    assert info.value.message.startswith("the OpenAI-compatible server at 127.0.0.1:")
    assert f"401 Unauthorized: check the key in {API_KEY_ENV}" in info.value.message


async def test_missing_key_variable(
    fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(API_KEY_ENV)
    error = await failure(fake_provider)
    assert error.kind == "auth_failed"
    assert API_KEY_ENV in error.message
    assert fake_provider.requests == []  # nothing was sent without a key


async def test_context_overflow(fake_provider: FakeProvider) -> None:
    fake_provider.enqueue(Reply.context_overflow())
    error = await failure(fake_provider)
    assert (error.kind, error.retryable) == ("context_overflow", False)


async def test_context_overflow_mid_stream(fake_provider: FakeProvider) -> None:
    fake_provider.enqueue(Reply().stream_error("context_overflow"))
    error = await failure(fake_provider)
    assert (error.kind, error.retryable) == ("context_overflow", False)


async def test_overloaded_mid_stream_is_retryable(fake_provider: FakeProvider) -> None:
    fake_provider.enqueue(Reply().text("partial").stream_error("overloaded"))
    error = await failure(fake_provider)
    assert (error.kind, error.retryable) == ("provider_unavailable", True)


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (Reply.not_found(), "model_not_found"),
        (Reply.bad_request("messages: invalid"), "bad_request"),
        (Reply.http_error(403, "forbidden"), "auth_failed"),
    ],
)
async def test_other_statuses(fake_anthropic: FakeProvider, reply: Reply, kind: str) -> None:
    fake_anthropic.enqueue(reply)
    error = await failure(fake_anthropic)
    assert (error.kind, error.retryable) == (kind, False)


async def test_dropped_connection_is_retryable(fake_provider: FakeProvider) -> None:
    fake_provider.enqueue(Reply().text("partial").drop())
    provider, config = make(fake_provider)
    seen: list[ModelEvent] = []
    with pytest.raises(ModelError) as info:
        async for event in provider.stream(request(config)):
            seen.append(event)
    assert text_of(seen) == "partial"
    assert (info.value.kind, info.value.retryable) == ("provider_unavailable", True)


async def test_stream_ending_before_final_event_is_retryable(fake_provider: FakeProvider) -> None:
    fake_provider.enqueue(Reply().text("partial").end_stream())
    error = await failure(fake_provider)
    assert (error.kind, error.retryable) == ("provider_unavailable", True)
    assert "ended the response stream early" in error.message


async def test_connection_refused_fails_at_once_naming_the_setting() -> None:
    fake = FakeProvider(api_key=None).start()
    config = fake.model_config()
    fake.stop()  # nothing listens on that port any more
    with pytest.raises(ModelError) as info:
        [e async for e in OpenAIChatProvider(config).stream(request(config))]
    # A mistake in the model's table, not a passing failure (docs/configuration.md, "Fail fast").
    assert (info.value.kind, info.value.retryable) == ("provider_unavailable", False)
    assert f"check base_url in [models.{config.name}]" in info.value.message


async def test_read_timeout_is_retryable(fake_openai: FakeProvider) -> None:
    fake_openai.enqueue(Reply().text("a").hang())
    config = fake_openai.model_config()
    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0, read=0.2)) as client:
        provider = OpenAIChatProvider(config, client=client)
        with pytest.raises(ModelError) as info:
            [e async for e in provider.stream(request(config))]
    assert (info.value.kind, info.value.retryable) == ("provider_unavailable", True)


# --- streaming and cancellation ------------------------------------------------------------


async def test_chunks_arrive_one_by_one(fake_provider: FakeProvider) -> None:
    first, second = Gate(), Gate()
    fake_provider.enqueue(Reply().text("one").wait(first).text(" two").wait(second).text(" three"))
    provider, config = make(fake_provider)
    stream = provider.stream(request(config))
    texts: list[str] = []
    async for event in stream:
        if isinstance(event, TextDelta):
            texts.append(event.text)
            if len(texts) == 1:
                first.open()
            elif len(texts) == 2:
                # Nothing beyond the second gate has been sent yet.
                assert await second.wait_reached()
                second.open()
    assert texts == ["one", " two", " three"]


async def test_cancellation_closes_the_connection_promptly(fake_provider: FakeProvider) -> None:
    fake_provider.enqueue(Reply().text("started").hang())
    provider, config = make(fake_provider)
    started = asyncio.Event()

    async def consume() -> None:
        async for event in provider.stream(request(config)):
            if isinstance(event, TextDelta):
                started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 5)
    began = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - began < 5.0  # cancelled at once, not at the end of a stream
    assert await fake_provider.last_request.wait_disconnected(timeout=5.0)


async def test_fake_without_script_fails_loudly(fake_openai: FakeProvider) -> None:
    error = await failure(fake_openai)
    assert error.kind == "bad_request"
    assert "no scripted reply" in error.message


def _http_date(when: float) -> str:
    from email.utils import formatdate

    return formatdate(when, usegmt=True)
