"""A subagent never gets a tool its parent lacks, through the real daemon, real bubblewrap and a
real MCP server (docs/security.md, "Subagents"): a root agent with no `shell` and no MCP server
starts a `worker` configured with `shell`, or with a trusted MCP server (`trust = true`: its
tools never ask). The spawn asks, saying which tools are wider; allowed, the worker still has
neither tool, and nothing it tried runs. One fake provider scripts both agents, told apart by
their instructions (`ROLE: ...`)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import Note, collect_until, completed_items, new_conversation, turn_ended
from tests.support.paths import TESTS
from tests.support.roles import role

SERVER = (TESTS / "server").joinpath("mcp") / "mcp_test_server.py"


def _config(fake: FakeProvider, worker_tools: str) -> str:
    return (
        fake.config_toml("main")
        + '\n[agents.default]\ndescription = "root"\nmodel = "main"\ninstructions = "ROLE: root"\n'
        + 'tools = ["read_file", "spawn_agent"]\n'
        + '\n[agents.worker]\ndescription = "Works"\ninstructions = "ROLE: worker"\n'
        + f"tools = {worker_tools}\n"
        + "\n[mcp_servers.t]\n"
        + f"command = {json.dumps(sys.executable)}\n"
        + f'args = [{json.dumps(str(SERVER))}, "stdio"]\n'
        + "startup_timeout_s = 45\ntrust = true\n"
    )


def _is(who: str) -> Any:
    return lambda req: role(req) == who


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("worker_tools", "tool", "arguments"),
    [
        ('["shell"]', "shell", lambda marker: {"command": f"touch {marker}"}),
        (
            '["mcp:t"]',
            "mcp__t__write_text",
            lambda marker: {"path": str(marker), "text": "pwned"},
        ),
    ],
    ids=["shell", "trusted-mcp"],
)
async def test_a_worker_never_gets_a_tool_its_parent_lacks(
    daemon_factory: Any, fake_openai: FakeProvider, worker_tools: str, tool: str, arguments: Any
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai, worker_tools))
    marker = d.workdir / "pwned"
    fake_openai.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "worker", "task": "do it"}),
        Reply().text("started"),
        when=_is("root"),
    )
    fake_openai.enqueue(
        Reply().tool_call(tool, arguments(marker)), Reply().text("done"), when=_is("worker")
    )
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
        # Starting an agent with tools the parent lacks is wider: it asks, saying so.
        first = ("approval/requested", "session/started")
        note = (await collect_until(client, lambda n: n["method"] in first, 90))[-1]
        assert note["method"] == "approval/requested", "a wider agent started unasked"
        asked: Note = note["params"]
        assert asked["tool"] == "spawn_agent" and tool.split("__")[0] in asked["reason"]
        await client.respond_approval(cid, asked["approvalId"], "allow", None)

        notes = await collect_until(client, lambda n: n["method"] == "session/started", 60)
        [child] = [n["params"]["session"] for n in notes if n["method"] == "session/started"]
        notes = await collect_until(client, turn_ended(child["sessionId"]), 90)
        [result] = [
            i for i in completed_items(notes, "tool_result") if i["sessionId"] == child["sessionId"]
        ]
        assert result["isError"]
        assert not [n for n in notes if n["method"] == "approval/requested"]
        # The worker's model was never offered the tool.
        [request] = [q for q in fake_openai.requests if role(q) == "worker"][:1]
        offered = {t["function"]["name"] for t in request.json.get("tools", [])}
        assert tool not in offered
    finally:
        await client.close()
    assert not marker.exists()
