"""The Anthropic stream parser on recorded Messages streams (no HTTP; see streams/README.md)."""

from __future__ import annotations

import pytest
from httpx_sse import ServerSentEvent

from openvaala_server.models.anthropic_stream import AnthropicStream
from openvaala_server.models.base import (
    ModelError,
    ReasoningDelta,
    ReasoningDone,
    StreamEnded,
    TextDelta,
    ToolCallRequested,
    ToolCallStarted,
    UsageReported,
)
from tests.server.models.recorded import endpoint, failure, run

WIRE = "anthropic"


def parser(secret: str | None = None) -> AnthropicStream:
    return AnthropicStream(endpoint(WIRE, "Anthropic", secret))


def test_text_with_cache_usage() -> None:
    assert run(parser(), WIRE, "text") == [
        TextDelta("Hello"),
        TextDelta(", world"),
        TextDelta("!"),
        # Input counts all three: uncached, written to the cache and read from it.
        UsageReported(input_tokens=12 + 100 + 2048, output_tokens=6, cached_input_tokens=2048),
        StreamEnded("stop"),
    ]


def test_tool_calls_assembled_from_json_fragments() -> None:
    events = run(parser(), WIRE, "tool_use")
    assert events == [
        TextDelta("Let me list the files."),
        ToolCallStarted("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "shell"),  # at its block's start
        ToolCallRequested(
            call_id="toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            name="shell",
            arguments={"command": "ls -la"},
            arguments_text='{"command": "ls -la"}',
        ),
        ToolCallStarted("toolu_01BVqPr4AbB6D4zZDBo5Ludf", "read_file"),
        ToolCallRequested(
            call_id="toolu_01BVqPr4AbB6D4zZDBo5Ludf",
            name="read_file",
            arguments={"path": "README.md"},
            arguments_text='{"path": "README.md"}',
        ),
        UsageReported(input_tokens=472, output_tokens=89),
        StreamEnded("tool_calls"),
    ]


def test_thinking_keeps_signature_and_redacted_data() -> None:
    events = run(parser(), WIRE, "thinking")
    assert events[:2] == [
        ReasoningDelta("The user asks for 27 * 453."),
        ReasoningDelta("\n27 * 453 = 12231."),
    ]
    assert events[2] == ReasoningDone(
        "The user asks for 27 * 453.\n27 * 453 = 12231.",
        provider_data={
            "provider": "anthropic",
            "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
        },
    )
    assert events[3] == ReasoningDone(
        "",
        provider_data={
            "provider": "anthropic",
            "redacted": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
        },
    )
    assert events[4:] == [
        TextDelta("27 * 453 = 12,231."),
        UsageReported(input_tokens=85, output_tokens=120),
        StreamEnded("stop"),
    ]


def test_max_tokens_stop_reason() -> None:
    assert run(parser(), WIRE, "max_tokens")[-1] == StreamEnded("max_tokens")


def test_overloaded_mid_stream_is_retryable_after_the_text_so_far() -> None:
    error, before = failure(parser(), WIRE, "overloaded_mid_stream")
    assert before == [TextDelta("Partial")]
    assert (error.kind, error.retryable) == ("provider_unavailable", True)
    assert "Anthropic reported an error mid-stream: Overloaded" in error.message


def test_prompt_too_long_mid_stream_is_context_overflow() -> None:
    error, _ = failure(parser(), WIRE, "too_long_mid_stream")
    assert (error.kind, error.retryable) == ("context_overflow", False)


def test_stream_without_message_stop_is_retryable() -> None:
    error, before = failure(parser(), WIRE, "cut_short")
    assert before == [TextDelta("The connection")]
    assert (error.kind, error.retryable) == ("provider_unavailable", True)
    assert "no message_stop event" in error.message


def test_error_messages_never_carry_the_key() -> None:
    stream = parser(secret="sk-ant-secret-123")
    data = '{"type":"error","error":{"type":"api_error","message":"bad key sk-ant-secret-123"}}'
    with pytest.raises(ModelError) as caught:
        stream.feed(ServerSentEvent("error", data))
    assert "sk-ant-secret-123" not in caught.value.message
    assert "bad key [redacted]" in caught.value.message


def test_unknown_events_are_ignored() -> None:
    stream = parser()
    assert stream.feed(ServerSentEvent("future_event", '{"type":"future_event","x":1}')) == []
    assert not stream.done
