"""The runtime in-process: a real `ConversationManager` on the in-memory store with a scripted
provider.

No daemon, no socket, no disk journal: each test drives the runtime through the methods the API
handlers call (`create`, `send_input`, `interrupt`, `steer_input`, `compact_now`, `fork`, ...)
and reads what it publishes through a subscriber of the conversation's hub, as a client would.
docs/design.md, "Fast core tests".
"""

from __future__ import annotations

import asyncio
import contextlib
import tomllib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from openvaala_server.config import Config, parse_config
from openvaala_server.domain.inbox import Mode
from openvaala_server.protocol.payloads import SendResult
from openvaala_server.runtime.conversation import LiveConversation
from openvaala_server.runtime.manager import ConversationManager
from openvaala_server.store.interface import ConversationStore
from openvaala_server.store.paths import DataDir
from tests.support.memory_store import MemoryStore
from tests.support.scripted_model import Script

Note = dict[str, Any]

CONFIG = """
[models.scripted]
provider = "demo"  # only for the config's checks: the runtime gets the scripted provider
context_window = 8000
max_output_tokens = 1000

[agents.default]
description = "General assistant"
model = "scripted"
tools = ["read_file", "write_file", "update_plan", "spawn_agent"]

[agents.helper]
description = "Does one small task"
model = "scripted"
tools = ["read_file"]

[retry]
max_retries = 2
base_delay_s = 0.001
max_delay_s = 0.001

[checkpoints]
enabled = false
"""

WAIT_S = 10.0  # a bound for any single wait: a hang fails the test instead of the run


class Events:
    """A hub subscriber that keeps every notification, decoded (a client's view)."""

    def __init__(self) -> None:
        self.notes: list[Note] = []
        self._arrived = asyncio.Event()

    def deliver(self, frame: str) -> None:
        note = orjson.loads(frame)
        self.notes.append({"method": note["method"], "params": note["params"]})
        self._arrived.set()

    def methods(self) -> list[str]:
        return [note["method"] for note in self.notes]

    def of(self, method: str) -> list[Note]:
        return [note for note in self.notes if note["method"] == method]

    async def until(self, accept: Callable[[Note], bool], count: int = 1) -> list[Note]:
        """Until `count` notifications `accept` took have arrived; returns them."""

        def found() -> bool:
            return sum(1 for note in self.notes if accept(note)) >= count

        async def arrived() -> None:
            while not found():
                self._arrived.clear()
                await self._arrived.wait()

        try:
            await asyncio.wait_for(arrived(), WAIT_S)
        except TimeoutError:
            raise AssertionError(f"timed out; saw {self.methods()[-30:]}") from None
        return [note for note in self.notes if accept(note)]

    async def turns_ended(self, count: int = 1) -> list[Note]:
        return await self.until(lambda note: note["method"] == "turn/ended", count)


@dataclass
class Core:
    runtime: ConversationManager
    store: MemoryStore
    script: Script
    cwd: Path
    events: dict[str, Events] = field(default_factory=dict)

    def watch(self, conv: LiveConversation) -> Events:
        """Subscribe to a conversation's hub (as conversation/subscribe does)."""
        events = self.events.setdefault(conv.conversation_id, Events())
        conv.hub.subscribe(events)
        return events

    async def new(self) -> tuple[LiveConversation, Events]:
        conv = self.runtime.create(str(self.cwd), None, None, None)
        return conv, self.watch(conv)

    async def send(
        self, conv: LiveConversation, text: str, mode: Mode = "queue", sid: str | None = None
    ) -> SendResult:
        return await self.runtime.send_input(conv.conversation_id, sid, text, mode)

    async def turn(self, conv: LiveConversation, text: str) -> Note:
        """Send `text` to an idle conversation and wait for its turn to end."""
        events = self.events[conv.conversation_id]
        before = len(events.of("turn/ended"))
        result = await self.send(conv, text)
        assert result["disposition"] == "started"
        ended = await events.turns_ended(before + 1)
        return ended[-1]


def make_runtime(config: Config, store: ConversationStore, script: Script) -> ConversationManager:
    return ConversationManager(config, store, providers=script.provider)


@contextlib.asynccontextmanager
async def running(runtime: ConversationManager) -> AsyncIterator[ConversationManager]:
    """The runtime with its supervisor entered (turns are its activities), as the daemon runs
    it (server.py); on the way out it shuts down as the daemon does (turns kept as interrupted).

    The supervisor is a task group, entered and left in one task of its own: a fixture's setup
    and teardown may run in different tasks."""
    stop = asyncio.Event()
    started = asyncio.Event()

    async def own() -> None:
        async with runtime.tasks:
            started.set()
            await stop.wait()
            await runtime.shutdown(timeout=WAIT_S)

    owner = asyncio.create_task(own(), name="runtime-owner")
    entered = asyncio.create_task(started.wait())
    await asyncio.wait({owner, entered}, timeout=WAIT_S, return_when=asyncio.FIRST_COMPLETED)
    entered.cancel()
    if owner.done():
        owner.result()  # entering failed: say why
    try:
        yield runtime
    finally:
        stop.set()
        await asyncio.wait_for(owner, 2 * WAIT_S)


@pytest.fixture
async def core(tmp_path: Path) -> AsyncIterator[Core]:
    config = parse_config(tomllib.loads(CONFIG))
    store = MemoryStore(DataDir(tmp_path / "home"))
    script = Script()
    cwd = tmp_path / "work"
    cwd.mkdir()
    async with running(make_runtime(config, store, script)) as runtime:
        yield Core(runtime, store, script, cwd)
