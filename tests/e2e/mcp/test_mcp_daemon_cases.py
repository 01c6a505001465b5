"""The MCP cases of issue 18 through the real daemon (its manager and adapter are tested in
test_mcp_servers.py): a stdio and a streamable-HTTP server built with the SDK, `enabled_tools`
in what the model is offered, two conversations sharing one server process, a crash mid-call
(a tool error, restarted for the next call), and a server that never starts (a clear error
within `startup_timeout_s`, never a hung turn). One daemon serves them all, turn after turn."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import SERVER
from tests.support.daemon import Daemon
from tests.support.events import completed_items, new_conversation, run_turn

Factory = Callable[..., Daemon]
HUNG_TIMEOUT_S = 2


def config(fake: FakeProvider, url: str) -> str:
    python, server = json.dumps(sys.executable), json.dumps(str(SERVER))
    return (
        fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\ntools = ["mcp:t", "mcp:web"]\n'
        + '\n[agents.waiter]\ndescription = "w"\nmodel = "fake"\ntools = ["mcp:hung"]\n'
        + f'\n[mcp_servers.t]\ncommand = {python}\nargs = [{server}, "stdio"]\n'
        + 'enabled_tools = ["echo", "pid", "crash"]\nstartup_timeout_s = 45\ntrust = true\n'
        + f'\n[mcp_servers.web]\nurl = "{url}"\nenabled_tools = ["echo"]\n'
        + "startup_timeout_s = 45\ntrust = true\n"
        + f'\n[mcp_servers.hung]\ncommand = {python}\nargs = [{server}, "hang"]\n'
        + f'enabled_tools = ["echo"]\nstartup_timeout_s = {HUNG_TIMEOUT_S}\ntrust = true\n'
    )


async def results_of(client: Client, cid: str, text: str) -> list[dict[str, Any]]:
    notes = await run_turn(client, cid, text)
    assert notes[-1]["params"]["status"] == "completed", notes[-1]
    return completed_items(notes, "tool_result")


@pytest.mark.timeout(240)
async def test_mcp_servers_through_the_daemon(
    daemon_factory: Factory, fake: FakeProvider, http_server: str
) -> None:
    d = daemon_factory(config(fake, http_server))
    client = await d.client()
    try:
        # A stdio and an HTTP server: each call's result reaches the next model request.
        fake.enqueue(
            Reply().tool_call("mcp__t__pid", {}),
            Reply().tool_call("mcp__web__echo", {"text": "över http"}),
            Reply().text("ok"),
        )
        first = await new_conversation(client, str(d.workdir))
        pid_result, web_result = await results_of(client, first, "go")
        pid = pid_result["output"]
        assert pid.isdigit() and not pid_result["isError"]
        assert web_result["output"] == "över http" and not web_result["isError"]
        tool_messages = [
            m["content"] for m in fake.requests[-1].json["messages"] if m["role"] == "tool"
        ]
        assert tool_messages == [pid, "över http"]
        # enabled_tools: the model is offered exactly the allowed tools, with their schemas.
        offered = {t["function"]["name"]: t["function"] for t in fake.requests[-1].json["tools"]}
        assert sorted(offered) == [
            "mcp__t__crash",
            "mcp__t__echo",
            "mcp__t__pid",
            "mcp__web__echo",
            "read_mcp_resource",  # the servers list resources
        ]
        assert offered["mcp__web__echo"]["parameters"]["properties"]["text"]["type"] == "string"

        # A second conversation uses the same server process.
        fake.enqueue(Reply().tool_call("mcp__t__pid", {}), Reply().text("ok"))
        second = await new_conversation(client, str(d.workdir))
        [same] = await results_of(client, second, "go")
        assert same["output"] == pid

        # A crash mid-call is a clear tool error; the next call restarts the server.
        fake.enqueue(
            Reply().tool_call("mcp__t__crash", {}),
            Reply().tool_call("mcp__t__pid", {}),
            Reply().text("ok"),
        )
        crashed, after = await results_of(client, second, "crash it")
        assert crashed["isError"] and "MCP server 't' stopped during the call" in crashed["output"]
        assert not after["isError"] and after["output"].isdigit() and after["output"] != pid

        # A server that never starts: the turn goes on, the call says why, within the timeout.
        fake.enqueue(Reply().tool_call("mcp__hung__echo", {"text": "x"}), Reply().text("ok"))
        third = await new_conversation(client, str(d.workdir), agent="waiter")
        started = time.monotonic()
        [hung] = await results_of(client, third, "go")
        assert time.monotonic() - started < HUNG_TIMEOUT_S + 20
        assert hung["isError"]
        assert "MCP server 'hung' is not available: did not start within" in hung["output"]
        servers = {s["name"]: s for s in (await client.request("mcp/list"))["servers"]}
        assert servers["hung"]["status"] == "failed"
        assert servers["t"]["status"] == "ready" and servers["web"]["status"] == "ready"
    finally:
        await client.close()
