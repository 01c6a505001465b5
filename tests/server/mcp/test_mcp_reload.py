"""A config reload's `[mcp_servers]` through the manager, against real SDK-built servers: a
changed server restarts with its new settings once its call under way has finished, an unchanged
one keeps running, a removed one stops."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

import pytest

from openvaala_server.mcp.manager import McpManager
from openvaala_server.structured import Supervisor
from tests.server.mcp.test_mcp_servers import call, stdio, tools_of, under_way


@pytest.fixture
async def manager(supervisor: Supervisor) -> AsyncIterator[McpManager]:
    servers = {"a": stdio("a", env={"WHO": "old"}), "b": stdio("b"), "c": stdio("c")}
    manager = McpManager(servers, supervisor)
    yield manager
    await manager.shutdown()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_reload_restarts_changed_servers_after_their_calls(manager: McpManager) -> None:
    tools = await tools_of(manager, ["mcp:*"])
    assert (await call(tools["mcp__a__env"], name="WHO")).output == "old"
    pid_a = int((await call(tools["mcp__a__pid"])).output)
    pid_b = int((await call(tools["mcp__b__pid"])).output)
    pid_c = int((await call(tools["mcp__c__pid"])).output)
    slow = asyncio.create_task(call(tools["mcp__a__sleep"], seconds=0.5))
    await under_way(manager, "a")  # the call is under way on the old server

    restarted = manager.reconfigure({"a": stdio("a", env={"WHO": "new"}), "b": stdio("b")})
    assert sorted(restarted) == ["a", "c"]
    assert not (await slow).is_error  # the call under way finished on the old server
    tools = await tools_of(manager, ["mcp:*"])
    assert (await call(tools["mcp__a__env"], name="WHO")).output == "new"
    assert int((await call(tools["mcp__a__pid"])).output) != pid_a
    assert int((await call(tools["mcp__b__pid"])).output) == pid_b  # unchanged: kept
    assert "mcp__c__pid" not in tools
    for _ in range(100):
        if not alive(pid_a) and not alive(pid_c):
            break
        await asyncio.sleep(0.05)
    assert not alive(pid_a) and not alive(pid_c)


async def test_shutdown_stops_a_retired_server_still_in_a_call(manager: McpManager) -> None:
    tools = await tools_of(manager, ["mcp:a"])
    pid_a = int((await call(tools["mcp__a__pid"])).output)
    slow = asyncio.create_task(call(tools["mcp__a__sleep"], seconds=30))
    await under_way(manager, "a")
    assert manager.reconfigure({}) == ["a", "b", "c"]
    started = asyncio.get_running_loop().time()
    await manager.shutdown()
    assert asyncio.get_running_loop().time() - started < 15  # not the call's 30 s
    assert (await slow).is_error  # the call ended with the server
    for _ in range(100):
        if not alive(pid_a):
            break
        await asyncio.sleep(0.05)
    assert not alive(pid_a)
