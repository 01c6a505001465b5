"""A Codex client per test, over the websocket and over `openvaala app-server` (stdio): every
test of this folder that takes `codex` runs on both transports."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.codex.harness import CodexClient, open_client
from tests.support.daemon import Daemon


@pytest.fixture(params=["websocket", "stdio"])
async def codex(request: pytest.FixtureRequest, daemon: Daemon) -> AsyncIterator[CodexClient]:
    client = await open_client(daemon, request.param)
    try:
        yield client
    finally:
        await client.close()
