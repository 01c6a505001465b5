"""A real SDK-built MCP server killed in the middle of a call (mcp/connection.py): the call
fails saying so, and by then the old server is gone for good — its process reaped, its status
`failed` with the reason (what `mcp/list` and `mcp/statusChanged` tell) — and the next call
starts a new process. In process, against a real server."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from openvaala_server.protocol.payloads import McpServerState
from tests.server.mcp.test_mcp_servers import (  # the in-process set-up
    Managers,
    call,
    manager_of,
    managers,  # noqa: F401  (a fixture)
    stdio,
    tools_of,
    under_way,
)


def still_there(pid: int) -> bool:
    """Whether the process exists, as a zombie too (dead, not yet reaped by its parent)."""
    return Path(f"/proc/{pid}").exists()


async def test_a_server_killed_mid_call_is_failed_and_reaped_before_the_call_returns(
    managers: Managers,  # noqa: F811
) -> None:
    manager = manager_of(managers, stdio())
    told: list[McpServerState] = []
    manager.on_status = told.append
    tools = await tools_of(manager, ["mcp:t"])
    pid = int((await call(tools["mcp__t__pid"])).output)

    sleeping = asyncio.create_task(call(tools["mcp__t__sleep"], seconds=60))
    await under_way(manager, "t")
    told.clear()
    os.kill(pid, signal.SIGKILL)
    result = await sleeping
    assert result.is_error and "MCP server 't' stopped during the call of sleep" in result.output
    assert not still_there(pid), "the killed server's process is left unreaped"
    [status] = manager.statuses()
    assert status["status"] == "failed"
    assert status["error"] == "stopped during a call of sleep; it restarts at the next call"
    assert [s["status"] for s in told][-1] == "failed"

    again = await call(tools["mcp__t__pid"])
    assert not again.is_error and int(again.output) != pid
    assert manager.statuses()[0]["status"] == "ready"
