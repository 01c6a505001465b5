"""MCP servers through the manager and the tool adapter, against real SDK-built servers."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.config import McpServerConfig
from openvaala_server.mcp.manager import McpManager
from openvaala_server.mcp.tool import McpTool, McpToolResult
from openvaala_server.structured import Supervisor
from openvaala_server.tools.base import Tool, ToolContext, ToolResult, access_of
from tests.server.mcp.conftest import STARTUP_S, stdio_args
from tests.support.json import j


def stdio(name: str = "t", **kwargs: Any) -> McpServerConfig:
    kwargs.setdefault("startup_timeout_s", STARTUP_S)
    return McpServerConfig(name=name, command=sys.executable, args=stdio_args(), **kwargs)


class Managers(list[McpManager]):
    """The managers a test made, and the supervisor their servers run in."""

    def __init__(self, tasks: Supervisor) -> None:
        super().__init__()
        self.tasks = tasks


@pytest.fixture
async def managers(supervisor: Supervisor) -> AsyncIterator[Managers]:
    made = Managers(supervisor)
    yield made
    for manager in made:
        await manager.shutdown()


def manager_of(made: Managers, *servers: McpServerConfig) -> McpManager:
    manager = McpManager({cfg.name: cfg for cfg in servers}, made.tasks)
    made.append(manager)
    return manager


async def tools_of(manager: McpManager, names: list[str]) -> dict[str, Tool]:
    """The servers' own tools (read_mcp_resource, offered beside them, is tested elsewhere)."""
    tools = await manager.tools_for(names)
    return {tool.spec.name: tool for tool in tools if tool.spec.name.startswith("mcp__")}


async def call(tool: Tool, **arguments: Any) -> ToolResult:
    ctx = ToolContext(cwd=Path.cwd(), emit_output=lambda _: None)
    return await tool.run(arguments, ctx)


async def under_way(manager: McpManager, server: str) -> None:
    """Until a call to `server` is under way (its connection counts it), instead of a guess of
    how long a task takes to get there."""
    connection = manager.connections[server]
    async with asyncio.timeout(30):
        while not connection.calls:  # noqa: ASYNC110 - counted, no event for the first call
            await asyncio.sleep(0.01)


async def test_a_stdio_servers_tools_carry_its_own_schemas(managers: Managers) -> None:
    manager = manager_of(managers, stdio())
    tools = await tools_of(manager, ["shell", "mcp:t"])
    assert "mcp__t__add" in tools and "mcp__t__echo" in tools
    spec = tools["mcp__t__add"].spec
    assert spec.description == "Add two whole numbers."
    assert j(spec.parameters)["properties"]["a"]["type"] == "integer"
    assert sorted(j(spec.parameters)["required"]) == ["a", "b"]
    [status] = manager.statuses()
    assert status["name"] == "t" and status["status"] == "ready"
    assert "add" in status["tools"] and "error" not in status


async def test_a_call_returns_the_servers_result_with_text_and_images(
    managers: Managers,
) -> None:
    tools = await tools_of(manager_of(managers, stdio()), ["mcp:*"])
    added = await call(tools["mcp__t__add"], a=2, b=40)
    assert (added.output, added.is_error) == ("42", False)
    picture = await call(tools["mcp__t__picture"])
    assert isinstance(picture, McpToolResult)
    assert picture.output == "a pixel\n[image 1: image/png, 68 bytes]"
    [image] = picture.images
    assert image.mime_type == "image/png" and image.data.startswith("iVBORw0KGgo")
    assert image.to_dict()["mimeType"] == "image/png"


async def test_a_streamable_http_server(managers: Managers, http_server: str) -> None:
    server = McpServerConfig(name="web", url=http_server, startup_timeout_s=STARTUP_S)
    manager = manager_of(managers, server)
    tools = await tools_of(manager, ["mcp:web"])
    assert j(tools["mcp__web__echo"].spec.parameters)["properties"]["text"]["type"] == "string"
    result = await call(tools["mcp__web__echo"], text="över http")
    assert (result.output, result.is_error) == ("över http", False)
    assert manager.statuses()[0]["status"] == "ready"


async def test_an_http_server_gets_the_configured_headers_and_bearer_token(
    managers: Managers, http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_MCP_TOKEN", "t0ken")
    server = McpServerConfig(
        name="web",
        url=http_server,
        headers={"X-Team": "blue"},
        bearer_token_env="TEST_MCP_TOKEN",
        startup_timeout_s=STARTUP_S,
    )
    tools = await tools_of(manager_of(managers, server), ["mcp:web"])
    assert (await call(tools["mcp__web__header"], name="x-team")).output == "blue"
    token = await call(tools["mcp__web__header"], name="authorization")
    assert token.output == "Bearer t0ken"


async def test_an_http_server_nobody_answers_at_is_failed_with_the_reason(
    managers: Managers,
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"  # bound, never listening
        server = McpServerConfig(name="web", url=url, startup_timeout_s=STARTUP_S)
        manager = manager_of(managers, server)
        assert await manager.tools_for(["mcp:web"]) == []
    [status] = manager.statuses()
    assert status["status"] == "failed"
    assert status["error"].startswith(f"cannot reach {url}: "), status


async def test_a_missing_bearer_token_variable_is_named(managers: Managers) -> None:
    server = McpServerConfig(
        name="web", url="http://127.0.0.1:9/mcp", bearer_token_env="OPENVAALA_TEST_UNSET_TOKEN"
    )
    manager = manager_of(managers, server)
    await manager.tools_for(["mcp:web"])
    assert manager.statuses()[0]["error"] == (
        "bearer_token_env: $OPENVAALA_TEST_UNSET_TOKEN is not set"
    )


async def test_a_tool_name_providers_would_refuse_is_made_safe_and_still_calls_the_tool(
    managers: Managers,
) -> None:
    tools = await tools_of(manager_of(managers, stdio()), ["mcp:t"])
    [name] = [name for name in tools if name.startswith("mcp__t__files_read")]
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name)
    assert (await call(tools[name])).output == "read"


async def test_an_interrupted_call_stops_at_once_and_the_server_keeps_serving(
    managers: Managers,
) -> None:
    manager = manager_of(managers, stdio())
    tools = await tools_of(manager, ["mcp:t"])
    slow = asyncio.create_task(call(tools["mcp__t__sleep"], seconds=30))
    await under_way(manager, "t")
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slow
    assert (await call(tools["mcp__t__echo"], text="after")).output == "after"


async def test_enabled_and_disabled_tools_filter_what_the_model_sees(
    managers: Managers,
) -> None:
    only = stdio("only", enabled_tools=("echo", "add"), disabled_tools=("add",))
    manager = manager_of(managers, only)
    tools = await tools_of(manager, ["mcp:only"])
    assert list(tools) == ["mcp__only__echo"]
    assert manager.statuses()[0]["tools"] == ["echo"]


async def test_an_agent_gets_only_the_servers_it_names(managers: Managers) -> None:
    manager = manager_of(managers, stdio("a"), stdio("b", enabled_tools=("pid",)))
    assert manager.current_tools(["mcp:b"]) == []  # nothing started yet
    assert list(await tools_of(manager, ["mcp:b"])) == ["mcp__b__pid"]
    offered = [t.spec.name for t in manager.current_tools(["mcp:*"])]
    assert offered == ["mcp__b__pid", "read_mcp_resource"]
    assert [s["status"] for s in manager.statuses()] == ["stopped", "ready"]
    assert await manager.tools_for(["shell"]) == []


async def test_a_server_crashing_mid_call_is_a_tool_error_and_restarts_for_the_next_call(
    managers: Managers,
) -> None:
    manager = manager_of(managers, stdio())
    tools = await tools_of(manager, ["mcp:t"])
    before = (await call(tools["mcp__t__pid"])).output
    crashed = await call(tools["mcp__t__crash"])
    assert crashed.is_error
    assert crashed.output == (
        "MCP server 't' stopped during the call of crash; it will be restarted for the next call"
    )
    assert manager.statuses()[0]["status"] == "failed"
    after = await call(tools["mcp__t__pid"])
    assert not after.is_error and after.output.isdigit() and after.output != before
    assert manager.statuses()[0]["status"] == "ready"


async def test_a_server_that_exits_while_idle_shows_failed_and_the_next_call_restarts_it(
    managers: Managers,
) -> None:
    manager = manager_of(managers, stdio())
    tools = await tools_of(manager, ["mcp:t"])
    before = (await call(tools["mcp__t__pid"])).output
    assert (await call(tools["mcp__t__exit_soon"])).output == "exiting"
    for _ in range(600):  # the process exits 0.2 s after answering
        if manager.statuses()[0]["status"] != "ready":
            break
        await asyncio.sleep(0.05)
    status = manager.statuses()[0]
    assert status["status"] == "failed" and status.get("toolsLastKnown") is True
    assert status["error"] == "the server exited; it restarts at the next call"
    assert "pid" in status["tools"]  # as it listed them last
    after = await call(tools["mcp__t__pid"])
    assert not after.is_error and after.output.isdigit() and after.output != before


async def test_a_server_that_never_starts_fails_within_its_startup_timeout(
    managers: Managers,
) -> None:
    hung = McpServerConfig(
        name="hung",
        command=sys.executable,
        args=stdio_args("hang"),
        startup_timeout_s=1,
        enabled_tools=("echo",),
    )
    manager = manager_of(managers, hung)
    tools = await asyncio.wait_for(tools_of(manager, ["mcp:hung"]), 30)
    [status] = manager.statuses()
    assert status == {
        "name": "hung",
        "status": "failed",
        "tools": [],
        "error": "did not start within startup_timeout_s = 1 s",
    }
    # Its allow-listed tool stays visible, so the model's call learns why it cannot run.
    result = await asyncio.wait_for(call(tools["mcp__hung__echo"], text="x"), 30)
    assert result.is_error
    assert "MCP server 'hung' is not available: did not start within startup_timeout_s" in (
        result.output
    )


async def test_a_server_that_cannot_run_says_why(managers: Managers) -> None:
    gone = McpServerConfig(name="gone", command="openvaala-no-such-mcp-server")
    manager = manager_of(managers, gone)
    assert await manager.tools_for(["mcp:gone"]) == []
    [status] = manager.statuses()
    assert status["status"] == "failed"
    assert status["error"] == "cannot run 'openvaala-no-such-mcp-server': no such program"


async def test_a_call_past_tool_timeout_is_a_tool_error(managers: Managers) -> None:
    tools = await tools_of(manager_of(managers, stdio(tool_timeout_s=0.5)), ["mcp:t"])
    result = await call(tools["mcp__t__sleep"], seconds=10)
    assert result.is_error
    assert result.output == "t: sleep did not finish within tool_timeout_s = 0.5 s"
    assert (await call(tools["mcp__t__echo"], text="still here")).output == "still here"


async def test_two_conversations_share_one_server_process(managers: Managers) -> None:
    manager = manager_of(managers, stdio())
    first, second = await asyncio.gather(tools_of(manager, ["mcp:t"]), tools_of(manager, ["mcp:*"]))
    pids = await asyncio.gather(
        call(first["mcp__t__pid"]), call(second["mcp__t__pid"]), call(first["mcp__t__pid"])
    )
    assert len({r.output for r in pids}) == 1 and pids[0].output.isdigit()


async def test_a_stdio_server_gets_its_env_but_never_the_daemons_secrets(
    managers: Managers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("OPENVAALA_TOKEN", "secret")
    tools = await tools_of(manager_of(managers, stdio(env={"GREETING": "hei"})), ["mcp:t"])
    env = tools["mcp__t__env"]
    assert (await call(env, name="GREETING")).output == "hei"
    assert (await call(env, name="OPENAI_API_KEY")).output == "<unset>"
    assert (await call(env, name="OPENVAALA_TOKEN")).output == "<unset>"
    assert (await call(env, name="PATH")).output == os.environ["PATH"]


async def test_shutdown_stops_the_server_process(managers: Managers) -> None:
    manager = manager_of(managers, stdio())
    tools = await tools_of(manager, ["mcp:t"])
    pid = int((await call(tools["mcp__t__pid"])).output)
    await manager.shutdown()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert manager.statuses()[0]["status"] == "stopped"


async def test_a_call_states_its_access_for_the_approval_prompt(
    managers: Managers,
) -> None:
    tools = await tools_of(manager_of(managers, stdio(trust=True)), ["mcp:t"])
    echo = tools["mcp__t__echo"]
    access = access_of(echo, {"text": "hi"}, Path.cwd())
    assert access.summary == 't: echo("text": "hi")'
    assert access.command is None and access.writes == ()
    assert isinstance(echo, McpTool) and echo.trust is True
