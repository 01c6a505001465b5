"""What each provider sends: messages, tools, system prompt, reasoning, Ollama context size."""

from __future__ import annotations

from typing import Any

from openvaala_server.domain.records import Item
from openvaala_server.models.anthropic import AnthropicProvider
from openvaala_server.models.base import ModelRequest, ReasoningDone, ToolSpec
from openvaala_server.models.http import (
    INTERRUPTED_MARK,
    INTERRUPTED_RESULT,
    NOTICE_PREFIX,
    SUMMARY_PREFIX,
)
from openvaala_server.models.openai_chat import OpenAIChatProvider
from openvaala_server.models.openai_responses import OpenAIResponsesProvider
from tests.fakes import API_KEY_ENV, FakeProvider, Reply

TOOL = ToolSpec("shell", "Run a command", {"type": "object", "properties": {"cmd": {}}})

# Two turns: the first used a tool (with reasoning), the second is in progress after a call.
HISTORY: list[Item] = [
    {"type": "summary", "text": "We set up the repo."},
    {"type": "user_message", "text": "list files"},
    {
        "type": "reasoning",
        "text": "old thought",
        "providerData": {"provider": "openai_responses", "id": "rs_old", "encrypted_content": "E1"},
    },
    {
        "type": "reasoning",
        "text": "old claude thought",
        "providerData": {"provider": "anthropic", "signature": "S1"},
    },
    {"type": "tool_call", "callId": "c1", "name": "shell", "arguments": {"cmd": "ls"}},
    {"type": "tool_result", "callId": "c1", "name": "shell", "output": "a.txt", "isError": False},
    {"type": "agent_message", "text": "There is a.txt."},
    {"type": "user_message", "text": "and run it"},
    {
        "type": "reasoning",
        "text": "new thought",
        "providerData": {"provider": "openai_responses", "id": "rs_new", "encrypted_content": "E2"},
    },
    {"type": "tool_call", "callId": "c2", "name": "shell", "arguments": {"cmd": "./a.txt"}},
    {"type": "tool_result", "callId": "c2", "name": "shell", "output": "denied", "isError": True},
]

INTERRUPTED: list[Item] = [
    {"type": "user_message", "text": "do two things"},
    {"type": "agent_message", "text": "Start", "status": "interrupted"},
    {
        "type": "tool_call",
        "callId": "c9",
        "name": "shell",
        "arguments": {"cmd": "sleep 100"},
        "status": "interrupted",
    },
    {"type": "notice", "text": "the previous turn was interrupted by the user"},
    {"type": "user_message", "text": "stop that"},
]


async def send(provider: Any, fake: FakeProvider, items: list[Item]) -> Any:
    fake.enqueue(Reply().text("ok"))
    req = ModelRequest(model=provider.config, instructions="SYS", items=items, tools=[TOOL])
    [e async for e in provider.stream(req)]
    return fake.last_request.json


async def test_chat_request(fake_openai: FakeProvider) -> None:
    body = await send(OpenAIChatProvider(fake_openai.model_config()), fake_openai, HISTORY)
    assert fake_openai.last_request.path == "/v1/chat/completions"
    assert fake_openai.last_request.headers["authorization"] == f"Bearer {fake_openai.api_key}"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 1000  # a compatible server, not api.openai.com
    assert "options" not in body  # not Ollama
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "shell",
                "description": TOOL.description,
                "parameters": TOOL.parameters,
            },
        }
    ]
    assert body["messages"] == [
        {"role": "system", "content": "SYS"},
        {"role": "user", "content": SUMMARY_PREFIX + "We set up the repo."},
        {"role": "user", "content": "list files"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "shell", "arguments": '{"cmd": "ls"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "assistant", "content": "There is a.txt."},
        {"role": "user", "content": "and run it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "shell", "arguments": '{"cmd": "./a.txt"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "Error: denied"},
    ]


async def test_chat_interrupted_call_gets_a_synthetic_result(fake_openai: FakeProvider) -> None:
    body = await send(OpenAIChatProvider(fake_openai.model_config()), fake_openai, INTERRUPTED)
    messages = body["messages"][1:]
    assert messages[1]["role"] == "assistant"
    # Partial text kept and marked as cut short, calls attached to it.
    assert messages[1]["content"] == "Start\n" + INTERRUPTED_MARK
    assert messages[1]["tool_calls"][0]["id"] == "c9"
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": "c9",
        "content": "Error: " + INTERRUPTED_RESULT,
    }
    assert messages[3] == {
        "role": "user",
        "content": NOTICE_PREFIX + "the previous turn was interrupted by the user",
    }
    assert messages[4] == {"role": "user", "content": "stop that"}


async def test_ollama_gets_num_ctx(fake_openai: FakeProvider) -> None:
    config = fake_openai.model_config(options={"ollama": True}, context_window=65_536)
    body = await send(OpenAIChatProvider(config), fake_openai, HISTORY[:2])
    assert body["options"] == {"num_ctx": 65_536}


def test_ollama_detected_by_port(fake_openai: FakeProvider) -> None:
    config = fake_openai.model_config(base_url="http://localhost:11434/v1", context_window=8192)
    provider = OpenAIChatProvider(config)
    assert provider.is_ollama
    req = ModelRequest(model=config, instructions="", items=[])
    assert provider.build_body(req)["options"] == {"num_ctx": 8192}


def test_official_openai_uses_max_completion_tokens(fake_openai: FakeProvider) -> None:
    config = fake_openai.model_config(base_url=None)
    body = OpenAIChatProvider(config).build_body(
        ModelRequest(model=config, instructions="", items=[])
    )
    assert body["max_completion_tokens"] == 1000
    assert "max_tokens" not in body


async def test_responses_request_current_turn(fake_responses: FakeProvider) -> None:
    provider = OpenAIResponsesProvider(fake_responses.model_config())
    body = await send(provider, fake_responses, HISTORY)
    assert fake_responses.last_request.path == "/v1/responses"
    assert body["instructions"] == "SYS"
    assert body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["max_output_tokens"] == 1000
    assert "reasoning" not in body  # nothing configured: send no reasoning parameters
    assert body["tools"] == [
        {
            "type": "function",
            "name": "shell",
            "description": TOOL.description,
            "parameters": TOOL.parameters,
            "strict": False,
        }
    ]
    items = body["input"]
    assert items[0] == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": SUMMARY_PREFIX + "We set up the repo."}],
    }
    reasoning = [i for i in items if i["type"] == "reasoning"]
    assert reasoning == [
        {
            "type": "reasoning",
            "id": "rs_new",
            "summary": [{"type": "summary_text", "text": "new thought"}],
            "encrypted_content": "E2",
        }
    ]
    assert {
        "type": "function_call",
        "call_id": "c1",
        "name": "shell",
        "arguments": '{"cmd": "ls"}',
    } in items
    assert {"type": "function_call_output", "call_id": "c2", "output": "Error: denied"} in items
    assert {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "There is a.txt."}],
    } in items


async def test_responses_request_all_turns(fake_responses: FakeProvider) -> None:
    config = fake_responses.model_config(reasoning_context="all_turns")
    body = await send(OpenAIResponsesProvider(config), fake_responses, HISTORY)
    ids = [i["id"] for i in body["input"] if i["type"] == "reasoning"]
    assert ids == ["rs_old", "rs_new"]  # the Anthropic one is foreign and never sent
    assert body["reasoning"] == {"context": "all_turns"}


async def test_responses_reports_applied_reasoning_context(fake_responses: FakeProvider) -> None:
    config = fake_responses.model_config(reasoning_context="all_turns")
    provider = OpenAIResponsesProvider(config)
    req = ModelRequest(model=config, instructions="", items=HISTORY[:2])

    fake_responses.enqueue(Reply().text("ok"))  # echoes the requested mode
    usage = [e async for e in provider.stream(req)][-2]
    assert getattr(usage, "reasoning_context", None) == "all_turns"

    fake_responses.enqueue(Reply().text("ok").reasoning_context("current_turn"))
    usage = [e async for e in provider.stream(req)][-2]
    assert getattr(usage, "reasoning_context", None) == "current_turn"


async def test_responses_reasoning_options(fake_responses: FakeProvider) -> None:
    config = fake_responses.model_config(
        options={"reasoning_effort": "high", "reasoning_summary": "auto"}
    )
    body = await send(OpenAIResponsesProvider(config), fake_responses, HISTORY[:2])
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}


async def test_responses_interrupted_call(fake_responses: FakeProvider) -> None:
    provider = OpenAIResponsesProvider(fake_responses.model_config())
    items = (await send(provider, fake_responses, INTERRUPTED))["input"]
    kinds = [i.get("type") for i in items]
    assert kinds == [
        "message",
        "message",
        "function_call",
        "function_call_output",
        "message",
        "message",
    ]
    assert items[3]["output"] == "Error: " + INTERRUPTED_RESULT


async def test_anthropic_request(fake_anthropic: FakeProvider) -> None:
    body = await send(AnthropicProvider(fake_anthropic.model_config()), fake_anthropic, HISTORY)
    request = fake_anthropic.last_request
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == fake_anthropic.api_key
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers
    assert body["system"] == "SYS"
    assert body["max_tokens"] == 1000
    assert body["stream"] is True
    assert body["tools"] == [
        {"name": "shell", "description": TOOL.description, "input_schema": TOOL.parameters}
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": SUMMARY_PREFIX + "We set up the repo."},
                {"type": "text", "text": "list files"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "old claude thought", "signature": "S1"},
                {"type": "tool_use", "id": "c1", "name": "shell", "input": {"cmd": "ls"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "a.txt", "is_error": False}
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "There is a.txt."}]},
        {"role": "user", "content": [{"type": "text", "text": "and run it"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "c2", "name": "shell", "input": {"cmd": "./a.txt"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c2", "content": "denied", "is_error": True}
            ],
        },
    ]


async def test_anthropic_interrupted_call_and_notice_merge(fake_anthropic: FakeProvider) -> None:
    body = await send(AnthropicProvider(fake_anthropic.model_config()), fake_anthropic, INTERRUPTED)
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"][0] == {"type": "text", "text": "Start\n" + INTERRUPTED_MARK}
    last = messages[2]["content"]
    assert last[0] == {
        "type": "tool_result",
        "tool_use_id": "c9",
        "content": INTERRUPTED_RESULT,
        "is_error": True,
    }
    assert last[1] == {
        "type": "text",
        "text": NOTICE_PREFIX + "the previous turn was interrupted by the user",
    }
    assert last[2] == {"type": "text", "text": "stop that"}


async def test_anthropic_thinking_budget(fake_anthropic: FakeProvider) -> None:
    config = fake_anthropic.model_config(options={"thinking_budget_tokens": 2048})
    body = await send(AnthropicProvider(config), fake_anthropic, HISTORY[:2])
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}


async def test_no_key_configured_sends_no_auth(fake_openai: FakeProvider) -> None:
    fake_openai.api_key = None  # e.g. a local Ollama
    config = fake_openai.model_config(api_key_env=None)
    await send(OpenAIChatProvider(config), fake_openai, HISTORY[:2])
    assert "authorization" not in fake_openai.last_request.headers
    assert API_KEY_ENV not in str(config)


async def test_responses_stamps_reasoning_with_the_applied_mode(
    fake_responses: FakeProvider,
) -> None:
    """The mode the provider applied rides on each reasoning item into the history, so the
    usage estimate knows it after a restart."""
    provider = OpenAIResponsesProvider(fake_responses.model_config())
    req = ModelRequest(model=provider.config, instructions="", items=HISTORY[:2])

    fake_responses.enqueue(Reply().reasoning("hmm", opaque="E").text("ok"))  # nothing echoed
    [done] = [e async for e in provider.stream(req) if isinstance(e, ReasoningDone)]
    assert done.provider_data is not None
    assert done.provider_data["reasoningContext"] == "current_turn"  # the default applied

    echoing = Reply().reasoning("hmm", opaque="E").text("ok").reasoning_context("all_turns")
    fake_responses.enqueue(echoing)
    [done] = [e async for e in provider.stream(req) if isinstance(e, ReasoningDone)]
    assert done.provider_data is not None
    assert done.provider_data["reasoningContext"] == "all_turns"
