"""A provider that never answers is cut by its deadline, and the user reads why (issue 25;
docs/design.md, "Structured concurrency"; docs/configuration.md, `read_timeout_s`).

Three silences, at the wire, against the real daemon: a server that accepts the connection and
never sends a byte (not even the status line), one that sends its headers and then nothing, and
one that stops in the middle of its stream. Each turn must end `failed` within the model's
`read_timeout_s` (1 s here, retries off), with an error naming the provider and the deadline.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import collect_until, new_conversation, turn_ended

READ_TIMEOUT_S = 1.0
# A turn cut by the deadline ends well within this (the deadline plus writing the turn's end on
# a loaded machine); without a deadline it would wait for the provider forever.
ENDED_WITHIN_S = 15.0


class SilentServer:
    """Accepts TCP connections on 127.0.0.1 and never writes a byte to them."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.accepted:
            conn.close()
        self._thread.join(5)


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    try:
        yield server
    finally:
        server.close()


def _config(fake: FakeProvider, silent: SilentServer) -> str:
    return (
        fake.config_toml("fake", read_timeout_s=READ_TIMEOUT_S)
        + "\n[models.mute]\nprovider = 'openai'\nmodel = 'm'\ncontext_window = 32000\n"
        + f"base_url = 'http://127.0.0.1:{silent.port}/v1'\nread_timeout_s = {READ_TIMEOUT_S}\n"
        + '\n[agents.default]\ndescription = "d"\nmodel = "fake"\n'
        + '\n[agents.mute]\ndescription = "m"\nmodel = "mute"\n'
        + "\n[retry]\nmax_retries = 0\n"
    )


async def _ended_after(
    client: Client, cwd: str, text: str, **extra: Any
) -> tuple[dict[str, Any], float]:
    cid = await new_conversation(client, cwd, **extra)
    began = time.monotonic()
    await client.request("input/send", {"conversationId": cid, "text": text, "mode": "queue"})
    notes = await collect_until(client, turn_ended(), ENDED_WITHIN_S + 5)
    took = time.monotonic() - began
    await client.unsubscribe(cid)
    ended: dict[str, Any] = notes[-1]["params"]
    return ended, took


async def test_a_provider_that_goes_silent_is_cut_by_its_deadline(
    daemon_factory: Callable[..., Daemon], fake_openai: FakeProvider, silent: SilentServer
) -> None:
    d = daemon_factory(_config(fake_openai, silent))
    client = await d.client()
    cwd = str(d.workdir)
    try:
        fake_openai.enqueue(Reply().hang(), when=lambda q: "AFTER-HEADERS" in q.body.decode())
        fake_openai.enqueue(
            Reply().text("ha").hang(), when=lambda q: "MID-STREAM" in q.body.decode()
        )
        for where, text, agent in [
            ("before the status line", "NO-BYTE", "mute"),
            ("after the headers", "AFTER-HEADERS", None),
            ("in the middle of the stream", "MID-STREAM", None),
        ]:
            extra = {"agent": agent} if agent else {}
            ended, took = await _ended_after(client, cwd, text, **extra)
            assert ended["status"] == "failed", (where, ended)
            error = ended["error"]
            assert error["kind"] == "provider_unavailable", (where, error)
            # The user reads who went silent and which setting cut it.
            assert "stopped responding" in error["message"], (where, error)
            assert "read_timeout_s" in error["message"], (where, error)
            assert READ_TIMEOUT_S * 0.9 <= took < ENDED_WITHIN_S, (where, took)
        assert silent.accepted, "the daemon never connected to the silent server"
    finally:
        await client.close()
