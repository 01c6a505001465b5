"""The editor's `mcpServers` (docs/editors.md, ACP): a stdio server named in `session/new` is
started by the daemon for that session, its tool is offered to that session's agent only, and
its call asks as any untrusted server's does. A real MCP server built on the `mcp` SDK, the
official ACP SDK's client, `openvaala acp`, a real daemon, the model faked at the wire; every
message checked against the ACP schema."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from acp import RequestError, text_block
from acp.schema import (
    AllowedOutcome,
    HttpMcpServer,
    McpServerStdio,
    RequestPermissionResponse,
)

from tests.acp.acp_schema import SchemaCheck
from tests.acp.harness import acp_agent, fake_config
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import SERVER, STARTUP_S
from tests.support.daemon import Daemon

TOOL = "mcp__editor-tools__echo"
# The test server as an editor names it in `mcpServers`.
SERVER_ENTRY = McpServerStdio(
    name="editor tools", command=sys.executable, args=[str(SERVER), "stdio"], env=[]
)


def _offered(body: bytes) -> list[str]:
    tools = orjson.loads(body).get("tools") or []
    return [t["function"]["name"] for t in tools]


async def test_a_server_of_session_new_serves_that_session_only(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    work = str(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    server = SERVER_ENTRY
    fake_openai.enqueue(
        Reply().tool_call(TOOL, {"text": "hello from the editor's server"}),
        Reply().text("done"),
        Reply().text("plain"),
    )
    schema = SchemaCheck()
    async with acp_agent(daemon, tmp_path, schema=schema) as (conn, rec):
        sid = (await conn.new_session(cwd=work, mcp_servers=[server])).session_id
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        # Never trusted: the call asks first, as a configured server's with `trust = false`.
        await rec.until(lambda: rec.questions)
        _, question, answer = rec.questions[0]
        call = rec.tool_calls(sid)[0]
        assert question.tool_call_id == call.tool_call_id and "echo" in call.title
        answer.set_result(
            RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow"))
        )
        assert (await asyncio.wait_for(prompt, 60)).stop_reason == "end_turn"
        first, second = fake_openai.requests[0], fake_openai.requests[1]
        assert TOOL in _offered(first.body)
        assert "hello from the editor's server" in second.body.decode()

        # Another session of the same editor, without the server: not offered there.
        other = (await conn.new_session(cwd=work, mcp_servers=[])).session_id
        assert (await conn.prompt(session_id=other, prompt=[text_block("x")])).stop_reason
        assert not any(n.startswith("mcp__") for n in _offered(fake_openai.last_request.body))

        # A wrong entry is refused with the reason, as in the config file.
        bad = HttpMcpServer(type="http", name="web", url="ftp://example.invalid/mcp", headers=[])
        with pytest.raises(RequestError, match="url: must start with http"):
            await conn.new_session(cwd=work, mcp_servers=[bad])
    schema.check()


async def test_resources_of_the_editors_and_the_configured_servers_are_both_readable(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    # Both servers list resources: `read_mcp_resource` must still reach the configured one.
    python, script = json.dumps(sys.executable), json.dumps(str(SERVER))
    config = (
        fake_config(fake_openai)
        + 'tools = ["read_file", "mcp:notes"]\n'
        + f'\n[mcp_servers.notes]\ncommand = {python}\nargs = [{script}, "stdio"]\n'
    )
    daemon: Daemon = daemon_factory(config)
    work = str(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    server = SERVER_ENTRY
    read = {"server": "notes", "uri": "notes://today"}
    fake_openai.enqueue(
        Reply().text("started"),  # the configured server starts with the first turn
        Reply().tool_call("read_mcp_resource", read),
        Reply().text("done"),
    )
    schema = SchemaCheck()
    async with acp_agent(daemon, tmp_path, schema=schema) as (conn, _rec):
        sid = (await conn.new_session(cwd=work, mcp_servers=[server])).session_id
        answer = await conn.prompt(session_id=sid, prompt=[text_block("start")])
        await _ready(daemon, "notes")
        answer = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert answer.stop_reason == "end_turn"
    tools = orjson.loads(fake_openai.requests[1].body).get("tools") or []
    (reader,) = [t for t in tools if t["function"]["name"] == "read_mcp_resource"]
    servers = reader["function"]["parameters"]["properties"]["server"]["enum"]
    assert sorted(servers) == ["editor-tools", "notes"]
    schema.check()
    assert "Water the ficus at noon." in fake_openai.last_request.body.decode()


async def _ready(daemon: Daemon, name: str) -> None:
    """Wait until the configured server `name` has started (it starts with a first turn)."""
    client = await daemon.client()
    try:
        async with asyncio.timeout(STARTUP_S):
            while True:
                servers = (await client.request("mcp/list"))["servers"]
                if any(s["name"] == name and s["status"] == "ready" for s in servers):
                    return
                await asyncio.sleep(0.2)
    finally:
        await client.close()


async def test_the_editors_server_stops_when_the_editor_goes(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    work = str(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    server = SERVER_ENTRY
    fake_openai.enqueue(Reply().tool_call("mcp__editor-tools__pid", {}), Reply().text("done"))
    schema = SchemaCheck()
    async with acp_agent(daemon, tmp_path, schema=schema) as (conn, rec):
        sid = (await conn.new_session(cwd=work, mcp_servers=[server])).session_id
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await rec.until(lambda: rec.questions)
        rec.questions[0][2].set_result(
            RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow"))
        )
        assert (await asyncio.wait_for(prompt, 60)).stop_reason == "end_turn"
    tool_results = [
        m["content"]
        for m in orjson.loads(fake_openai.last_request.body)["messages"]
        if m["role"] == "tool"
    ]
    pid = int(str(tool_results[-1]).strip())
    schema.check()
    # `openvaala acp` exited: its connection closed, and the daemon stopped the server.
    async with asyncio.timeout(30):
        while True:
            if not await asyncio.to_thread(os.path.exists, f"/proc/{pid}"):
                return
            await asyncio.sleep(0.1)
