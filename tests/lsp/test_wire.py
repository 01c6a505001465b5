"""The JSON-RPC edges over raw stdio (no LSP client library smoothing them over): requests
without `params`, invalid JSON, batches, `data.kind` on every error, a daemon error in one line."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon import Daemon


class Raw:
    def __init__(self, daemon: Daemon, stderr: Path) -> None:
        self.stderr_path = stderr
        self._err = stderr.open("wb")
        self._buffer = b""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "openvaala_server", "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            env=daemon.env,
            cwd=daemon.workdir,
        )

    def send(self, message: Any) -> None:
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
        self.process.stdin.flush()

    def read(self, timeout: float = 20) -> dict[str, Any]:
        """The next message from the bridge (server notifications included)."""
        while b"\r\n\r\n" not in self._buffer:
            self._fill(timeout)
        header, _, rest = self._buffer.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in header.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        self._buffer = rest
        while len(self._buffer) < length:
            self._fill(timeout)
        body, self._buffer = self._buffer[:length], self._buffer[length:]
        result: dict[str, Any] = json.loads(body)
        return result

    def _fill(self, timeout: float) -> None:
        out = self.process.stdout
        assert out is not None
        ready, _, _ = select.select([out], [], [], timeout)
        assert ready, "the bridge did not answer"
        chunk = os.read(out.fileno(), 65536)
        assert chunk, "the bridge closed its output"
        self._buffer += chunk

    def answer(self, msg_id: Any) -> dict[str, Any]:
        while True:
            message = self.read()
            if "method" not in message and message.get("id") == msg_id:
                return message

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self._err):
            if stream is not None:
                stream.close()


@pytest.fixture
def raw(daemon: Daemon, tmp_path: Path) -> Iterator[Raw]:
    bridge = Raw(daemon, tmp_path / "lsp.err")
    bridge.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}})
    assert "result" in bridge.answer(0)
    bridge.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    yield bridge
    bridge.stop()


def test_requests_without_params_are_answered(raw: Raw) -> None:
    raw.send({"jsonrpc": "2.0", "id": 1, "method": "openvaala/conversations/list"})
    assert raw.answer(1)["result"] == {"conversations": []}
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "openvaala/agents"})
    assert [a["name"] for a in raw.answer(2)["result"]["agents"]] == ["default"]
    # usage needs a conversation: an error that says which param, with its kind.
    raw.send({"jsonrpc": "2.0", "id": 3, "method": "openvaala/usage"})
    error = raw.answer(3)["error"]
    assert error["code"] == -32602
    assert error["data"] == {"param": "conversationId", "kind": "invalid_params"}


def test_invalid_json_and_batches_get_json_rpc_errors(raw: Raw) -> None:
    raw.send(b'{"jsonrpc": "2.0", "id": 4, "method": ')
    parse = raw.answer(None)
    assert parse["error"]["code"] == -32700
    assert parse["error"]["data"]["kind"] == "parse_error"

    batch = [
        {"jsonrpc": "2.0", "id": 5, "method": "openvaala/agents", "params": {}},
        {"jsonrpc": "2.0", "id": 6, "method": "openvaala/conversations/list", "params": {}},
    ]
    raw.send(json.dumps(batch).encode())
    for msg_id in (5, 6):
        error = raw.answer(msg_id)["error"]
        assert error["code"] == -32600 and error["data"]["kind"] == "invalid_request"
        assert "batch" in error["message"]

    # The bridge still works afterwards.
    raw.send({"jsonrpc": "2.0", "id": 7, "method": "openvaala/agents", "params": {}})
    assert "result" in raw.answer(7)
    assert "Traceback" not in raw.stderr()


def test_a_daemon_error_keeps_its_kind_and_logs_one_line(raw: Raw) -> None:
    missing = "0" * 32
    raw.send(
        {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "openvaala/usage",
            "params": {"conversationId": missing},
        }
    )
    error = raw.answer(8)["error"]
    assert error["data"]["kind"] == "not_found"
    raw.send({"jsonrpc": "2.0", "id": 9, "method": "shutdown"})
    raw.answer(9)
    raw.send({"jsonrpc": "2.0", "method": "exit"})
    raw.process.wait(20)
    log = raw.stderr()
    assert "Traceback" not in log
    assert [line for line in log.splitlines() if "not_found" in line or missing in line] == [
        f"openvaala-lsp WARNING request 8 failed: {error['message']} (not_found)"
    ]
