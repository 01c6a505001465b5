"""The usage estimates of a conversation's subagents at rest, after an open, gather the
conversation's surroundings (git, the project's files) once for all of them, not once per
session (docs/design.md, "Subagent sessions paged on demand"); each still gets its estimate
with them, published.

In-process, with real parts: a `ConversationManager` on the real store, the conversation
written with the store's own writers (tests/support/subagent_history.py), in a git repository.
`read_surroundings` is the real method, counted."""

from __future__ import annotations

import asyncio
import subprocess
import tomllib
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import pytest

from openvaala_server.config import parse_config
from openvaala_server.runtime.conversation import LiveConversation
from openvaala_server.runtime.manager import ConversationManager
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.support import subagent_history
from tests.support.supervisor import owned

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "test"
model = "demo"
"""
SUBAGENTS = 6


class Usage:
    """A subscriber woken by every `usage/updated`."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def deliver(self, frame: str) -> None:
        if "usage/updated" in frame:
            self.event.set()


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    return work


@pytest.fixture
async def runtime(
    tmp_path: Path, work: Path
) -> AsyncIterator[tuple[ConversationManager, str, Path]]:
    home = tmp_path / "home"
    written = await subagent_history.write(home, work, "demo", more_closed=SUBAGENTS - 2)
    store = await Store.open(DataDir(home))
    manager = ConversationManager(parse_config(tomllib.loads(CONFIG)), store)
    async with owned(manager.tasks, partial(manager.shutdown, timeout=10)):
        yield manager, written.cid, work
    await store.close()


async def test_subagents_at_rest_share_one_gathering_of_their_surroundings(
    runtime: tuple[ConversationManager, str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    manager, cid, _work = runtime
    gathered: list[str] = []
    real = LiveConversation.read_surroundings

    def counted(self: LiveConversation) -> object:
        gathered.append(self.conversation_id)
        return real(self)

    monkeypatch.setattr(LiveConversation, "read_surroundings", counted)
    conv = await manager.open(cid)
    subagents = [s for s in conv.sessions.values() if s.parent_session_id is not None]
    assert len(subagents) == SUBAGENTS
    usage = Usage()
    conv.hub.subscribe(usage)
    await conv.ensure_history()
    async with asyncio.timeout(20):
        while True:
            usage.event.clear()
            if all(s.surroundings is not None for s in conv.sessions.values()):
                break
            await usage.event.wait()
    # Every session's estimate counts its surroundings: the subagents' share one gathering.
    assert all(not s.estimate_lacks_surroundings for s in conv.sessions.values())
    assert len(gathered) == 2  # the root's own, and one for every subagent at rest
