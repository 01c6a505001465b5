"""An AGENTS.md that is not a regular file never holds a turn (docs/design.md, "What the model
is told"): a real daemon whose working directory's AGENTS.md is a FIFO — which a tool can make
with `mkfifo`, and whose open would wait for a writer forever, holding every later turn. The
file is skipped: the turn completes without anyone writing it, the daemon keeps serving, and
what a late writer sends is never read. The model is faked at the wire."""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import Callable

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.fakes.wire import CHAT
from tests.support.daemon import Daemon
from tests.support.events import collect_until, new_conversation, turn_ended

AGENT = '\n[agents.default]\ndescription = "test"\nmodel = "fake"\n'


async def test_an_agents_md_fifo_is_skipped_and_holds_no_turn(
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
            # Nobody writes the FIFO: the turn goes on without it.
            notes = await asyncio.wait_for(collect_until(client, turn_ended()), 20)
            assert notes[-1]["params"]["status"] == "completed"
            listed = await asyncio.wait_for(client.request("conversation/list", {}), 10)
            assert cid in [c["conversationId"] for c in listed["conversations"]]
            other = await asyncio.wait_for(d.client("other"), 10)
            await other.close()
            system = fake.last_request.json["messages"][0]
            assert system["role"] == "system" and str(fifo) not in system["content"]
            # Nothing holds the FIFO open for reading: a writer finds no reader.
            with pytest.raises(OSError) as no_reader:
                os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            assert no_reader.value.errno == errno.ENXIO
        finally:
            await client.close()
