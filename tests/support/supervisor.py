"""A `Supervisor` for in-process tests whose fixtures start activities (MCP servers).

pytest-asyncio runs a fixture's setup and teardown in different tasks, and a task group must be
left by the task that entered it: so one task of its own owns the supervisor, from the fixture's
setup to its teardown (which waits for it, as an owner does).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

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
