"""Shared provider helpers: Retry-After parsing, error mapping, pairing tool calls with results."""

from __future__ import annotations

from email.utils import formatdate
from typing import cast

from openvaala_server.config import ModelConfig
from openvaala_server.domain.records import Item
from openvaala_server.models.http import (
    INTERRUPTED_RESULT,
    Endpoint,
    error_for_status,
    pair_tool_calls,
    parse_retry_after,
    redact,
)

CONFIG = ModelConfig("m", "openai", "gpt-x", 1000, 100, api_key_env="OPENAI_API_KEY")
OPENAI = Endpoint("OpenAI", CONFIG, "sk-secret-value")


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("1.5") == 1.5
    assert parse_retry_after("-4") == 0.0
    assert parse_retry_after(formatdate(1000.0 + 20, usegmt=True), now=1000.0) == 20.0
    assert parse_retry_after(formatdate(1000.0 - 20, usegmt=True), now=1000.0) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    assert parse_retry_after("nan") is None


def test_error_messages_are_readable() -> None:
    error = error_for_status(OPENAI, 401, {}, '{"error": {"message": "bad key sk-secret-value"}}')
    assert error.kind == "auth_failed"
    assert error.message == (
        "OpenAI said 401 Unauthorized: check the key in OPENAI_API_KEY (api_key_env in "
        "[models.m]): bad key [redacted]"
    )
    error = error_for_status(OPENAI, 404, {}, "<html>nope</html>")
    assert error.kind == "model_not_found"
    assert "check model = 'gpt-x' and base_url in [models.m]" in error.message


def test_overflow_and_retry_after_ms() -> None:
    body = '{"error": {"code": "context_length_exceeded", "message": "too long"}}'
    assert error_for_status(OPENAI, 400, {}, body).kind == "context_overflow"
    error = error_for_status(OPENAI, 429, {"retry-after-ms": "1500", "retry-after": "9"}, "")
    assert (error.retryable, error.retry_after) == (True, 1.5)
    anthropic = (
        '{"type": "error", "error": {"type": "invalid_request_error",'
        ' "message": "prompt is too long: 9 > 8"}}'
    )
    assert error_for_status(OPENAI, 400, {}, anthropic).kind == "context_overflow"
    assert error_for_status(OPENAI, 400, {}, '{"error": "bad"}').kind == "bad_request"


def test_redact_ignores_tiny_secrets() -> None:
    assert redact("abc", "a") == "abc"
    assert redact("x sk-1234 y", "sk-1234") == "x [redacted] y"


def call(call_id: str, **extra: object) -> Item:
    return cast(
        Item, {"type": "tool_call", "callId": call_id, "name": "t", "arguments": {}, **extra}
    )


def result(call_id: str) -> Item:
    return {"type": "tool_result", "callId": call_id, "name": "t", "output": "ok", "isError": False}


def test_pairing_keeps_complete_history() -> None:
    items: list[Item] = [
        {"type": "user_message", "text": "q"},
        call("a"),
        call("b"),
        result("b"),
        result("a"),
    ]
    paired = pair_tool_calls(items)
    # Results follow their calls in call order.
    assert [(i["type"], i.get("callId")) for i in paired] == [
        ("user_message", None),
        ("tool_call", "a"),
        ("tool_call", "b"),
        ("tool_result", "a"),
        ("tool_result", "b"),
    ]


def test_pairing_answers_orphan_calls() -> None:
    items: list[Item] = [call("a", status="interrupted"), {"type": "notice", "text": "interrupted"}]
    paired = pair_tool_calls(items)
    assert paired[1]["type"] == "tool_result"
    assert paired[1]["callId"] == "a"
    assert paired[1]["output"] == INTERRUPTED_RESULT
    assert paired[1]["isError"] is True
    assert paired[2]["type"] == "notice"


def test_pairing_text_between_calls_and_orphan_results() -> None:
    items: list[Item] = [
        call("a"),
        {"type": "agent_message", "text": "and also"},
        call("b"),
        result("a"),
        result("b"),
        result("gone"),  # its call was compacted away
    ]
    kinds = [(i["type"], i.get("callId")) for i in pair_tool_calls(items)]
    assert kinds == [
        ("tool_call", "a"),
        ("agent_message", None),
        ("tool_call", "b"),
        ("tool_result", "a"),
        ("tool_result", "b"),
        ("notice", None),
    ]


def test_sequential_rounds_stay_sequential() -> None:
    items: list[Item] = [call("a"), result("a"), call("b"), result("b")]
    assert [i.get("callId") for i in pair_tool_calls(items)] == ["a", "a", "b", "b"]
