"""The Chat Completions stream parser on recorded chunk streams (no HTTP; see streams/README.md)."""

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
from openvaala_server.models.openai_chat_stream import OpenAIChatStream
from tests.server.models.recorded import endpoint, failure, run

WIRE = "openai_chat"  # the directory of its streams; the provider is "openai"


def parser() -> OpenAIChatStream:
    return OpenAIChatStream(endpoint("openai", "OpenAI"))


def test_text_with_usage_chunk() -> None:
    assert run(parser(), WIRE, "text") == [
        TextDelta("Hello"),
        TextDelta(" there"),
        TextDelta("!"),
        UsageReported(input_tokens=1200, output_tokens=3, cached_input_tokens=1024),
        StreamEnded("stop"),
    ]


def test_parallel_tool_calls_assembled_by_index() -> None:
    assert run(parser(), WIRE, "tool_calls") == [
        # Announced as their names arrive: the turn keeps a call begun when it is interrupted.
        ToolCallStarted("call_DdmO9pD3xa9XTPNJ32zg2hcA", "shell"),
        ToolCallStarted("call_ABc1234567890xyzDEFghiJK", "read_file"),
        ToolCallRequested(
            call_id="call_DdmO9pD3xa9XTPNJ32zg2hcA",
            name="shell",
            arguments={"command": "ls"},
            arguments_text='{"command": "ls"}',
        ),
        ToolCallRequested(
            call_id="call_ABc1234567890xyzDEFghiJK",
            name="read_file",
            arguments={"path": "README.md"},
            arguments_text='{"path": "README.md"}',
        ),
        UsageReported(input_tokens=310, output_tokens=41),
        StreamEnded("tool_calls"),
    ]


def test_reasoning_content_ends_when_the_answer_begins() -> None:
    assert run(parser(), WIRE, "reasoning_content") == [
        ReasoningDelta("Okay, 9.11 vs 9.8:"),
        ReasoningDelta(" 0.8 > 0.11."),
        ReasoningDone("Okay, 9.11 vs 9.8: 0.8 > 0.11."),
        TextDelta("9.8 is greater."),
        UsageReported(input_tokens=18, output_tokens=52),
        StreamEnded("stop"),
    ]


def test_ollama_reasoning_and_a_call_without_id() -> None:
    events = run(parser(), WIRE, "ollama_reasoning_tool_no_id")
    assert events[:2] == [
        ReasoningDelta("I should read the file."),
        ReasoningDone("I should read the file."),
    ]
    started, call = events[2:4]
    assert isinstance(started, ToolCallStarted) and isinstance(call, ToolCallRequested)
    assert (call.name, call.arguments) == ("read_file", {"path": "notes.txt"})
    assert call.call_id.startswith("call_0_")  # made up: the loop pairs the result by it
    assert started.call_id == call.call_id  # the same made-up id, from its start
    # Ollama says "stop" although it called a tool.
    assert events[4:] == [
        UsageReported(input_tokens=200, output_tokens=25),
        StreamEnded("tool_calls"),
    ]


def test_length_is_max_tokens() -> None:
    assert run(parser(), WIRE, "length")[-1] == StreamEnded("max_tokens")


def test_error_chunk_mid_stream() -> None:
    error, before = failure(parser(), WIRE, "error_mid_stream")
    assert before == [TextDelta("Start")]
    assert (error.kind, error.retryable) == ("provider_unavailable", True)
    assert "The server had an error" in error.message


def test_context_length_error_chunk_is_overflow() -> None:
    error, _ = failure(parser(), WIRE, "overflow_mid_stream")
    assert (error.kind, error.retryable) == ("context_overflow", False)


def test_stream_without_done_is_retryable() -> None:
    error, before = failure(parser(), WIRE, "cut_short")
    assert before == [TextDelta("Half an ans")]
    assert (error.kind, error.retryable) == ("provider_unavailable", True)
    assert "no data: [DONE]" in error.message
