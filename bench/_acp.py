"""An ACP client for benches: `openvaala acp` spawned by the `agent-client-protocol` package's
client and initialized, the way an editor starts it. Not a test helper."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, spawn_agent_process
from acp.core import ClientSideConnection
from acp.schema import ClientCapabilities, Implementation


@contextlib.asynccontextmanager
async def acp_connection(handler: Any, env: dict[str, str]) -> AsyncIterator[ClientSideConnection]:
    """`handler` answers what the agent calls (session_update, request_permission)."""
    async with spawn_agent_process(
        cast(Client, handler), sys.executable, "-m", "openvaala_server", "acp", env=env
    ) as (conn, _process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="bench", version="0"),
        )
        yield conn
