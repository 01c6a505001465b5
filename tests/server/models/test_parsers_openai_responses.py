"""The Responses API stream parser on recorded event streams (no HTTP; see streams/README.md)."""

from __future__ import annotations

from openvaala_server.models.base import (
    ReasoningDelta,
    ReasoningDone,
    StreamEnded,
    TextDelta,
    ToolCallRequested,
    ToolCallStarted,
    UsageReported,
)
from openvaala_server.models.openai_responses_stream import OpenAIResponsesStream
from openvaala_server.protocol.json_types import JsonValue
from tests.server.models.recorded import endpoint, failure, run

WIRE = "openai_responses"


def parser(requested: str = "current_turn") -> OpenAIResponsesStream:
    return OpenAIResponsesStream(endpoint(WIRE, "OpenAI"), requested)


def test_text() -> None:
    assert run(parser(), WIRE, "text") == [
        TextDelta("Hi"),
        TextDelta(" there!"),
        UsageReported(input_tokens=37, output_tokens=11, reasoning_context="current_turn"),
        StreamEnded("stop"),
    ]


def test_function_call() -> None:
    assert run(parser(), WIRE, "function_call") == [
        ToolCallStarted("call_Zm9vYmFyYmF6cXV4", "shell"),  # response.output_item.added
        ToolCallRequested(
            call_id="call_Zm9vYmFyYmF6cXV4",
            name="shell",
            arguments={"command": "pwd"},
            arguments_text='{"command":"pwd"}',
            provider_data={"id": "fc_68b1a2c3d4e5f6a7", "call_id": "call_Zm9vYmFyYmF6cXV4"},
        ),
        UsageReported(
            input_tokens=291,
            output_tokens=23,
            reasoning_context="current_turn",
            cached_input_tokens=256,
        ),
        StreamEnded("tool_calls"),
    ]


def test_reasoning_summary_parts_and_the_echoed_context() -> None:
    summary: list[JsonValue] = [
        {"type": "summary_text", "text": "**Checking the files**"},
        {"type": "summary_text", "text": "The answer is short."},
    ]
    assert run(parser(), WIRE, "reasoning") == [
        ReasoningDelta("**Checking the files**"),
        ReasoningDelta("\n\n"),  # the second summary part is a new paragraph
        ReasoningDelta("The answer is short."),
        ReasoningDone(
            "**Checking the files**\n\nThe answer is short.",
            provider_data={
                "provider": "openai_responses",
                "id": "rs_0a1b2c3d4e",
                "summary": summary,
                # The provider's echo in response.created wins over what was requested.
                "reasoningContext": "all_turns",
                "encrypted_content": "gAAAAABoENCRYPTEDxYz",
            },
        ),
        TextDelta("Done."),
        UsageReported(input_tokens=500, output_tokens=180, reasoning_context="all_turns"),
        StreamEnded("stop"),
    ]


def test_raw_reasoning_of_open_weight_servers() -> None:
    events = run(parser(), WIRE, "raw_reasoning")
    assert events[0] == ReasoningDelta("Simple greeting.")
    done = events[1]
    assert isinstance(done, ReasoningDone) and done.text == "Simple greeting."
    assert events[2:] == [
        TextDelta("Hello!"),
        UsageReported(input_tokens=20, output_tokens=8, reasoning_context="current_turn"),
        StreamEnded("stop"),
    ]


def test_incomplete_is_max_tokens() -> None:
    events = run(parser(), WIRE, "incomplete")
    assert events[0] == TextDelta("It was a dark")
    assert events[-1] == StreamEnded("max_tokens")


def test_response_failed_mid_stream_is_retryable() -> None:
    error, before = failure(parser(), WIRE, "failed")
    assert before == [TextDelta("Par")]
    assert (error.kind, error.retryable) == ("provider_unavailable", True)
    assert "The model failed to generate a response." in error.message


def test_error_event_context_length() -> None:
    error, _ = failure(parser(), WIRE, "error_event")
    assert (error.kind, error.retryable) == ("context_overflow", False)


def test_stream_without_completed_is_retryable() -> None:
    error, before = failure(parser(), WIRE, "cut_short")
    assert before == [TextDelta("Half")]
    assert "no response.completed event" in error.message
