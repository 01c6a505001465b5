"""An idle stdio MCP server costs the daemon no wake-up: nothing polls it (no timer is armed in
the event loop while it waits), yet a server whose process is killed while idle is reported
failed as soon as its stream ends, to every client (`mcp/statusChanged`), and the next call
starts it again. Against a real SDK-built server, in process."""

from __future__ import annotations

import asyncio
import os
import signal
import time

from openvaala_server.mcp.manager import McpManager
from openvaala_server.protocol.payloads import McpServerState
from tests.server.mcp.conftest import STARTUP_S
from tests.server.mcp.test_mcp_servers import (  # the in-process set-up
    Managers,
    call,
    manager_of,
    managers,  # noqa: F401  (a fixture)
    stdio,
    tools_of,
)

# A timer due within this long would wake an idle daemon.
SOON_S = 10.0
# Checks in a row that must find no such timer (a poll would be armed at nearly every one).
QUIET_CHECKS = 20


def timers_due_soon() -> list[object]:
    """The callbacks the event loop will run within SOON_S by a timer. asyncio keeps them in
    its private `_scheduled` heap; no public call lists them."""
    loop = asyncio.get_running_loop()
    now = loop.time()
    scheduled = getattr(loop, "_scheduled", [])
    return [h._callback for h in scheduled if not h.cancelled() and h.when() - now < SOON_S]


async def until_no_timer(timeout: float) -> None:
    """Until QUIET_CHECKS checks in a row find no timer due soon (this wait's own sleep has
    fired by each check)."""
    deadline = time.monotonic() + timeout
    quiet = 0
    while quiet < QUIET_CHECKS:
        due = timers_due_soon()
        quiet = 0 if due else quiet + 1
        assert time.monotonic() < deadline, f"an idle server keeps timers armed: {due}"
        await asyncio.sleep(0.05)


async def test_an_idle_server_arms_no_timer_and_a_kill_is_reported_at_once(
    managers: Managers,  # noqa: F811
) -> None:
    manager: McpManager = manager_of(managers, stdio())
    told: list[McpServerState] = []
    changed = asyncio.Event()

    def on_status(state: McpServerState) -> None:
        told.append(state)
        changed.set()

    manager.on_status = on_status
    tools = await tools_of(manager, ["mcp:t"])
    pid = int((await call(tools["mcp__t__pid"])).output)
    assert manager.statuses()[0]["status"] == "ready"

    # Idle: nothing in the event loop is due to wake for the server.
    await until_no_timer(timeout=30)

    # Killed while idle: every client is told, without anyone asking.
    told.clear()
    changed.clear()
    os.kill(pid, signal.SIGKILL)
    async with asyncio.timeout(STARTUP_S):
        while not any(s["status"] == "failed" for s in told):
            await changed.wait()
            changed.clear()
    [failed] = [s for s in told if s["status"] == "failed"]
    assert failed["error"] == "the server exited; it restarts at the next call"
    # The next call starts it again.
    again = await call(tools["mcp__t__pid"])
    assert not again.is_error and int(again.output) != pid
