"""The JSON-RPC error edges of the editor bridge over raw stdio, as docs/editors.md ("Errors")
promises: every error carries `data.kind` and no traceback; an unanswerable message is still
answered; requests before `initialize` are refused; `shutdown` says the truth about a prompt it
cut; withdrawing an input nobody knows is `not_found`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_approvals_e2e import fake_config
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.lsp.test_wire import Raw
from tests.support.daemon import Daemon


@pytest.fixture
def fresh(daemon: Daemon, tmp_path: Path) -> Iterator[Raw]:
    """A bridge not initialized yet."""
    bridge = Raw(daemon, tmp_path / "lsp.err")
    yield bridge
    bridge.stop()


def _initialize(raw: Raw) -> None:
    raw.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}})
    assert "result" in raw.answer(0)
    raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})


def test_requests_before_initialize_are_refused(fresh: Raw) -> None:
    fresh.send({"jsonrpc": "2.0", "id": 1, "method": "openvaala/agents", "params": {}})
    error = fresh.answer(1)["error"]
    assert error["code"] == -32002 and error["data"]["kind"] == "not_initialized"
    _initialize(fresh)
    fresh.send({"jsonrpc": "2.0", "id": 2, "method": "openvaala/agents", "params": {}})
    assert "result" in fresh.answer(2)


def test_unknown_methods_and_bad_ids_get_kinds_without_tracebacks(fresh: Raw) -> None:
    _initialize(fresh)
    fresh.send({"jsonrpc": "2.0", "id": 3, "method": "openvaala/nope", "params": {}})
    error = fresh.answer(3)["error"]
    assert error["code"] == -32601 and error["data"]["kind"] == "method_not_found"

    fresh.send({"jsonrpc": "2.0", "id": {"a": 1}, "method": "openvaala/agents", "params": {}})
    error = fresh.answer(None)["error"]
    assert error["code"] == -32600 and error["data"]["kind"] == "invalid_request"
    assert "Traceback" not in str(error)

    fresh.send({"jsonrpc": "2.0", "id": 4, "method": 7, "params": {}})
    error = fresh.answer(4)["error"]
    assert error["code"] == -32600 and error["data"]["kind"] == "invalid_request"
    assert "Traceback" not in str(error)

    fresh.send(
        b'{"jsonrpc": "2.0", "id": 5, "method": "openvaala/agents", "params": {"x": "\xff"}}'
    )
    error = fresh.answer(None)["error"]
    assert error["code"] == -32700 and error["data"]["kind"] == "parse_error"
    assert "UTF-8" in error["message"]

    fresh.send({"jsonrpc": "2.0", "id": 6, "method": "openvaala/agents", "params": {}})
    assert "result" in fresh.answer(6)  # still serving
    assert "Traceback" not in fresh.stderr()


def test_withdrawing_an_unknown_input_is_not_found(fresh: Raw) -> None:
    _initialize(fresh)
    fresh.send(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "openvaala/input",
            "params": {"action": "withdraw", "inputId": "0" * 32},
        }
    )
    error = fresh.answer(7)["error"]
    assert error["data"]["kind"] == "not_found"


def test_shutdown_with_a_prompt_waiting_says_the_turn_goes_on(
    daemon_factory: Any, fake_openai: FakeProvider, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai, "never"))
    fake_openai.enqueue(Reply().text("still ", "thinking").hang())
    raw = Raw(daemon, tmp_path / "lsp.err")
    try:
        _initialize(raw)
        raw.send({"jsonrpc": "2.0", "id": 1, "method": "openvaala/conversations/new", "params": {}})
        cid = raw.answer(1)["result"]["conversation"]["conversationId"]
        prompt = {"conversationId": cid, "text": "hello"}
        raw.send({"jsonrpc": "2.0", "id": 2, "method": "openvaala/prompt", "params": prompt})
        while not fake_openai.requests:  # the turn is running, the prompt waits on it
            raw.read()
        raw.send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
        error = raw.answer(2)["error"]
        assert error["data"]["kind"] == "shutting_down"
        assert "daemon stopped" not in error["message"]
        assert "goes on in the daemon" in error["message"]
        assert "result" in raw.answer(3)
    finally:
        raw.stop()


def test_a_request_of_another_jsonrpc_version_is_answered(fresh: Raw) -> None:
    _initialize(fresh)
    fresh.send({"jsonrpc": "1.0", "id": 8, "method": "openvaala/agents", "params": {}})
    error = fresh.answer(8)["error"]
    assert error["code"] == -32600 and error["data"]["kind"] == "invalid_request"
    assert '"2.0"' in error["message"]
