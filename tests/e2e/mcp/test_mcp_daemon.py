"""MCP through the real daemon: an agent naming `mcp:NAME` gets the server's tools, a call asks
once per conversation and tool unless the server is trusted, its result reaches the model's next
request, and `mcp/list` shows the server's status."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import collect_until, completed_items, new_conversation, turn_ended
from tests.support.paths import TESTS

SERVER = (TESTS / "server/mcp").joinpath("mcp_test_server.py")
Factory = Callable[..., Daemon]


def config(fake: FakeProvider, trust: bool) -> str:
    return (
        fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\n'
        + 'tools = ["shell", "mcp:t"]\n'
        + "\n[mcp_servers.t]\n"
        + f"command = {json.dumps(sys.executable)}\n"
        + f'args = [{json.dumps(str(SERVER))}, "stdio"]\n'
        + "startup_timeout_s = 45\n"
        + f"trust = {'true' if trust else 'false'}\n"
    )


def tool_messages(body: dict[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [m["content"] for m in messages if m.get("role") == "tool"]


@pytest.mark.timeout(120)
async def test_an_mcp_tool_asks_once_per_conversation_and_its_result_reaches_the_model(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake, trust=False))
    fake.enqueue(
        Reply().tool_call("mcp__t__echo", {"text": "first"}),
        Reply().tool_call("mcp__t__echo", {"text": "second"}),
        Reply().text("Both done."),
    )
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
        notes = await collect_until(client, lambda n: n["method"] == "approval/requested", 90)
        asked = notes[-1]["params"]
        assert asked["tool"] == "mcp__t__echo" and "'t'" in asked["reason"]
        await client.respond_approval(cid, asked["approvalId"], "allow_conversation")
        notes = await collect_until(client, turn_ended(), 60)
        assert not [n for n in notes if n["method"] == "approval/requested"]  # asked once
        first, second = (r["output"] for r in completed_items(notes, "tool_result"))
        assert "first" in first and "second" in second
        assert any("second" in m for m in tool_messages(fake.requests[-1].json))
        # The model saw the server's own schema (once it had started: servers start in the
        # background, docs/design.md).
        [spec] = [
            t for t in fake.requests[-1].json["tools"] if t["function"]["name"] == "mcp__t__echo"
        ]
        assert "text" in spec["function"]["parameters"]["properties"]
        listed = await client.request("mcp/list")
        [server] = listed["servers"]
        assert server["name"] == "t" and server["status"] == "ready" and "echo" in server["tools"]
    finally:
        await client.close()


@pytest.mark.timeout(120)
async def test_a_trusted_server_never_asks(daemon_factory: Factory, fake: FakeProvider) -> None:
    d = daemon_factory(config(fake, trust=True))
    fake.enqueue(Reply().tool_call("mcp__t__add", {"a": 2, "b": 3}), Reply().text("5"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
        notes = await collect_until(client, turn_ended(), 90)
        assert not [n for n in notes if n["method"] == "approval/requested"]
        [result] = completed_items(notes, "tool_result")
        assert "5" in result["output"] and not result["isError"]
    finally:
        await client.close()
