"""A `Supervisor` for in-process tests whose fixtures start activities (MCP servers).

pytest-asyncio runs a fixture's setup and teardown in different tasks, and a task group must be
left by the task that entered it: so one task of its own owns the supervisor, from the fixture's
setup to its teardown (which waits for it, as an owner does).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from openvaala_server.structured import Supervisor


@pytest.fixture
async def supervisor() -> AsyncIterator[Supervisor]:
    entered: asyncio.Future[Supervisor] = asyncio.get_running_loop().create_future()
    release = asyncio.Event()

    async def own() -> None:
        async with Supervisor("test") as tasks:
            entered.set_result(tasks)
            await release.wait()

    owner = asyncio.create_task(own())
    try:
        yield await asyncio.wait_for(entered, 5)
    finally:
        release.set()
        await asyncio.wait_for(owner, 30)


@contextlib.asynccontextmanager
async def owned(
    tasks: Supervisor, before_leaving: Callable[[], Awaitable[object]] | None = None
) -> AsyncIterator[Supervisor]:
    """`tasks` entered and left by one task of its own (a runtime's supervisor, as server.py
    enters it); `before_leaving` runs inside it at the end (a runtime's shutdown)."""
    entered = asyncio.Event()
    release = asyncio.Event()

    async def own() -> None:
        async with tasks:
            entered.set()
            await release.wait()
            if before_leaving is not None:
                await before_leaving()

    owner = asyncio.create_task(own())
    waiting = asyncio.create_task(entered.wait())
    await asyncio.wait({owner, waiting}, timeout=5, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if owner.done():
        owner.result()  # entering failed: say why
    try:
        yield tasks
    finally:
        release.set()
        await asyncio.wait_for(owner, 30)
