"""What the model is told about a turn the user interrupted: each provider's request marks the
partial answer and the tool result that were cut short, so the model knows which tool call did
not finish (docs/protocol.md, "Interrupting")."""

from __future__ import annotations

from typing import Any

from openvaala_server.domain.records import Item
from openvaala_server.models.anthropic import AnthropicProvider
from openvaala_server.models.base import ModelRequest
from openvaala_server.models.http import (
    FAILED_MARK,
    INTERRUPTED_MARK,
    NOTICE_PREFIX,
    agent_text,
    pair_tool_calls,
    tool_result_text,
)
from openvaala_server.models.openai_chat import OpenAIChatProvider
from openvaala_server.models.openai_responses import OpenAIResponsesProvider
from tests.fakes import FakeProvider, Reply

NOTICE = "The user interrupted the previous turn."

# Two interrupted turns: the first while its answer streamed, the second while its second tool
# ran (the command had printed a line); each followed by the interrupted turn's notice.
HISTORY: list[Item] = [
    {"type": "user_message", "text": "explain the build", "status": "completed"},
    {"type": "agent_message", "text": "The build first runs ma", "status": "interrupted"},
    {"type": "notice", "text": NOTICE, "status": "completed"},
    {"type": "user_message", "text": "build and test", "status": "completed"},
    {"type": "agent_message", "text": "Building first.", "status": "completed"},
    {"type": "tool_call", "callId": "c1", "name": "shell", "arguments": {"command": "make"}},
    {
        "type": "tool_result",
        "callId": "c1",
        "name": "shell",
        "output": "built",
        "isError": False,
        "status": "completed",
    },
    {"type": "tool_call", "callId": "c2", "name": "shell", "arguments": {"command": "make test"}},
    {
        "type": "tool_result",
        "callId": "c2",
        "name": "shell",
        "output": "running 40 tests\n",
        "isError": False,
        "status": "interrupted",
    },
    {"type": "notice", "text": NOTICE, "status": "completed"},
    {"type": "user_message", "text": "skip the tests", "status": "completed"},
]

PARTIAL_OUTPUT = "running 40 tests\n" + INTERRUPTED_MARK
PARTIAL_ANSWER = "The build first runs ma\n" + INTERRUPTED_MARK


async def body_for(provider: Any, fake: FakeProvider, items: list[Item]) -> Any:
    fake.enqueue(Reply().text("ok"))
    request = ModelRequest(model=provider.config, instructions="SYS", items=items)
    [event async for event in provider.stream(request)]
    return fake.last_request.json


def call(call_id: str, command: str) -> dict[str, Any]:
    arguments = '{"command": "' + command + '"}'
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "shell", "arguments": arguments},
    }


async def test_chat_marks_the_interrupted_tool_result_and_answer(
    fake_openai: FakeProvider,
) -> None:
    body = await body_for(OpenAIChatProvider(fake_openai.model_config()), fake_openai, HISTORY)
    assert body["messages"] == [
        {"role": "system", "content": "SYS"},
        {"role": "user", "content": "explain the build"},
        {"role": "assistant", "content": PARTIAL_ANSWER},
        {"role": "user", "content": NOTICE_PREFIX + NOTICE},
        {"role": "user", "content": "build and test"},
        {"role": "assistant", "content": "Building first.", "tool_calls": [call("c1", "make")]},
        {"role": "tool", "tool_call_id": "c1", "content": "built"},
        {"role": "assistant", "content": None, "tool_calls": [call("c2", "make test")]},
        {"role": "tool", "tool_call_id": "c2", "content": PARTIAL_OUTPUT},
        {"role": "user", "content": NOTICE_PREFIX + NOTICE},
        {"role": "user", "content": "skip the tests"},
    ]


async def test_responses_marks_the_interrupted_tool_result_and_answer(
    fake_responses: FakeProvider,
) -> None:
    provider = OpenAIResponsesProvider(fake_responses.model_config())
    body = await body_for(provider, fake_responses, HISTORY)

    def message(role: str, text: str) -> dict[str, Any]:
        part = "input_text" if role == "user" else "output_text"
        return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}

    def function_call(call_id: str, command: str) -> dict[str, Any]:
        arguments = '{"command": "' + command + '"}'
        return {
            "type": "function_call",
            "call_id": call_id,
            "name": "shell",
            "arguments": arguments,
        }

    assert body["input"] == [
        message("user", "explain the build"),
        message("assistant", PARTIAL_ANSWER),
        message("user", NOTICE_PREFIX + NOTICE),
        message("user", "build and test"),
        message("assistant", "Building first."),
        function_call("c1", "make"),
        {"type": "function_call_output", "call_id": "c1", "output": "built"},
        function_call("c2", "make test"),
        {"type": "function_call_output", "call_id": "c2", "output": PARTIAL_OUTPUT},
        message("user", NOTICE_PREFIX + NOTICE),
        message("user", "skip the tests"),
    ]


async def test_anthropic_marks_the_interrupted_tool_result_and_answer(
    fake_anthropic: FakeProvider,
) -> None:
    provider = AnthropicProvider(fake_anthropic.model_config())
    body = await body_for(provider, fake_anthropic, HISTORY)

    def tool_use(call_id: str, command: str) -> dict[str, Any]:
        return {"type": "tool_use", "id": call_id, "name": "shell", "input": {"command": command}}

    def result(call_id: str, content: str) -> dict[str, Any]:
        return {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": content,
            "is_error": False,
        }

    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "explain the build"}]},
        {"role": "assistant", "content": [{"type": "text", "text": PARTIAL_ANSWER}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": NOTICE_PREFIX + NOTICE},
                {"type": "text", "text": "build and test"},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Building first."}, tool_use("c1", "make")],
        },
        {"role": "user", "content": [result("c1", "built")]},
        {"role": "assistant", "content": [tool_use("c2", "make test")]},
        {
            "role": "user",
            "content": [
                result("c2", PARTIAL_OUTPUT),
                {"type": "text", "text": NOTICE_PREFIX + NOTICE},
                {"type": "text", "text": "skip the tests"},
            ],
        },
    ]


def test_an_empty_interrupted_tool_result_is_the_mark_alone() -> None:
    # Today's shell tool result of a command stopped before it printed anything.
    empty: Item = {"type": "tool_result", "callId": "c", "output": "", "status": "interrupted"}
    assert tool_result_text(empty) == INTERRUPTED_MARK


def test_a_failed_turns_leftovers_are_marked_too() -> None:
    result: Item = {"type": "tool_result", "callId": "c", "output": "half", "status": "failed"}
    assert tool_result_text(result) == "half\n" + FAILED_MARK
    answer: Item = {"type": "agent_message", "text": "Half an ans", "status": "failed"}
    assert agent_text(answer) == "Half an ans\n" + FAILED_MARK


def test_finished_items_are_sent_unchanged() -> None:
    result: Item = {"type": "tool_result", "callId": "c", "output": "ok \n", "status": "completed"}
    assert tool_result_text(result) == "ok \n"
    answer: Item = {"type": "agent_message", "text": "Done. ", "status": "completed"}
    assert agent_text(answer) == "Done. "
    # An interrupted message without text still sends nothing.
    assert agent_text({"type": "agent_message", "text": "", "status": "interrupted"}) == ""


def test_an_interrupted_result_whose_call_was_compacted_away_is_marked_in_its_note() -> None:
    orphan: Item = {
        "type": "tool_result",
        "callId": "gone",
        "name": "shell",
        "output": "half of it",
        "status": "interrupted",
    }
    [note] = pair_tool_calls([orphan])
    assert note["type"] == "notice"
    assert note["text"] == "Result of an earlier shell call: half of it\n" + INTERRUPTED_MARK
