"""Real MCP servers (tests/server/mcp/mcp_test_server.py, built with the official SDK)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.providers import FakeProvider
from tests.support.supervisor import supervisor  # noqa: F401  (a fixture)

SERVER = Path(__file__).with_name("mcp_test_server.py")
# Starting Python with the SDK imported takes seconds on a loaded machine.
STARTUP_S = 45.0


def stdio_args(mode: str = "stdio") -> tuple[str, ...]:
    return (str(SERVER), mode)


def daemon_config(
    fake: FakeProvider,
    *,
    tools: str = '["mcp:t"]',
    mode: str = "stdio",
    extra: str = "",
    mode_args: tuple[str, ...] = (),
) -> str:
    """A daemon whose default agent (`tools`) has the test server as `t`, trusted."""
    python = json.dumps(sys.executable)
    args = ", ".join(json.dumps(a) for a in (str(SERVER), mode, *mode_args))
    return (
        fake.config_toml("fake")
        + f'\n[agents.default]\ndescription = "t"\nmodel = "fake"\ntools = {tools}\n'
        + f"\n[mcp_servers.t]\ncommand = {python}\nargs = [{args}]\n"
        + f"trust = true\n{extra}"
    )


def gated_config(fake: FakeProvider, gate: Path) -> str:
    """`daemon_config` with a server that starts slowly: it answers once the file `gate` exists."""
    extra = f"startup_timeout_s = {STARTUP_S * 2:g}\n"
    return daemon_config(fake, mode="gated", mode_args=(str(gate),), extra=extra)


def last_user_text(fake: FakeProvider) -> str:
    """The text of the last user message the model was sent."""
    messages = fake.requests[-1].json["messages"]
    return str([m for m in messages if m["role"] == "user"][-1]["content"])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def http_server() -> Iterator[str]:
    """A streamable-HTTP server on 127.0.0.1; yields its URL."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the test MCP server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)
