"""AGENTS.md is read off the event loop (docs/design.md, "Performance at scale"): a real daemon
whose working directory's AGENTS.md is a FIFO, so reading it waits until the test writes it —
as a slow disk or a hung network mount would make it wait. Meanwhile the daemon keeps serving
(a read on the loop would freeze every client), and the turn's model call, which waits for the
file, carries what was finally written. The model is faked at the wire."""

from __future__ import annotations

import asyncio
import errno
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.fakes.wire import CHAT
from tests.support.daemon import Daemon
from tests.support.events import collect_until, new_conversation, turn_ended

AGENT = '\n[agents.default]\ndescription = "test"\nmodel = "fake"\n'


def write_when_read(fifo: Path, text: str, timeout: float = 10.0) -> None:
    """Write `text` into the FIFO once a reader has it open (without blocking forever)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO or time.monotonic() > deadline:
                raise
            time.sleep(0.02)  # nobody reads it yet
            continue
        try:
            os.set_blocking(fd, True)
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        return


async def test_a_slow_agents_md_stalls_only_its_turn_not_the_daemon(
    daemon_factory: Callable[..., Daemon], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeProvider(wire=CHAT) as fake:
        for key, value in fake.env.items():
            monkeypatch.setenv(key, value)
        d = daemon_factory(fake.config_toml("fake") + AGENT)
        fifo = d.workdir / "AGENTS.md"
        os.mkfifo(fifo)
        fake.enqueue(Reply().text("Bonjour"))
        client = await d.client()
        try:
            cid = await asyncio.wait_for(new_conversation(client, str(d.workdir)), 10)
            await asyncio.wait_for(
                client.request("input/send", {"conversationId": cid, "text": "hello"}), 10
            )
            # The turn waits for AGENTS.md; everything else is served meanwhile.
            listed = await asyncio.wait_for(client.request("conversation/list", {}), 10)
            assert cid in [c["conversationId"] for c in listed["conversations"]]
            other = await asyncio.wait_for(d.client("other"), 10)
            await other.close()
            assert fake.requests == []

            await asyncio.to_thread(write_when_read, fifo, "Always answer in French.")
            notes = await asyncio.wait_for(collect_until(client, turn_ended()), 20)
            assert notes[-1]["params"]["status"] == "completed"
            system = fake.last_request.json["messages"][0]
            assert system["role"] == "system"
            assert "Always answer in French." in system["content"]
        finally:
            await client.close()
