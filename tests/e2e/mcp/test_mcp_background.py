"""MCP servers start in the background (issue 34, points 3 and 4), through the real daemon with
real SDK-built servers: a server that never answers holds no turn that does not call it, and
shows as "starting" meanwhile; after a restart, the context cockpit and `mcp/list` count a
server's last listed tools while it is not ready, marked as such."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from openvaala_server.protocol.display import mcp_server_state
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import daemon_config
from tests.support.daemon import Daemon
from tests.support.events import completed_items, new_conversation, run_turn

Factory = Callable[..., Daemon]
# Far longer than the test may take: a turn that waited for the start would time the test out.
NEVER_S = 600


def config(fake: FakeProvider, mode: str) -> str:
    return daemon_config(
        fake, tools='["shell", "mcp:*"]', mode=mode, extra=f"startup_timeout_s = {NEVER_S}\n"
    )


@pytest.mark.timeout(60)
async def test_a_server_that_never_answers_holds_no_turn_that_does_not_call_it(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake, "hang"))
    fake.enqueue(Reply().text("first"), Reply().text("second"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        for text in ("one", "two"):  # neither turn waits for the start still under way
            notes = await run_turn(client, cid, text)
            assert notes[-1]["params"]["status"] == "completed"
        replies = [i["text"] for i in completed_items(notes, "agent_message")]
        assert replies == ["second"]
        [server] = (await client.request("mcp/list"))["servers"]
        assert server["name"] == "t" and server["status"] == "starting"
    finally:
        await client.close()


@pytest.mark.timeout(180)
async def test_the_cockpit_counts_a_starting_servers_last_listed_tools(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake, "stdio"))
    fake.enqueue(Reply().tool_call("mcp__t__echo", {"text": "hi"}), Reply().text("ok"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        [echoed] = completed_items(await run_turn(client, cid, "go"), "tool_result")
        assert echoed["output"] == "hi"
    finally:
        await client.close()
    # The same server, now one that never starts: what it listed before still counts.
    d.stop()
    d.config_path.write_text(config(fake, "hang") + "\n[server]\nport = 0\n")
    d.start()
    client = await d.client()
    try:
        trace = await client.request("conversation/context", {"conversationId": cid})
        [tools] = [p for p in trace["parts"] if p["kind"] == "tools"]
        assert "mcp__t__echo" in tools["label"] and "mcp__t__add" in tools["label"]
        assert "as last listed" in tools["label"]
        assert "mcp__t__echo" in tools["lastKnown"] and "shell" not in tools["lastKnown"]
        [server] = (await client.request("mcp/list"))["servers"]
        assert "echo" in server["tools"] and server["toolsLastKnown"] is True
        assert "it listed last" in mcp_server_state(server)  # what every client shows
    finally:
        await client.close()
