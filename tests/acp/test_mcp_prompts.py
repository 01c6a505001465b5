"""MCP prompts and resources in an ACP editor, through `openvaala acp` against a real daemon and
a real SDK-built server: once the server is ready its prompt is offered as `/mcp__t__review` (an
`available_commands_update` the daemon's `mcp/statusChanged` brought), running it sends the
server's filled-in prompt as the message, and `@t:notes://today` sends that resource's text."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import AvailableCommandsUpdate

from tests.acp.harness import acp_agent
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import SERVER, STARTUP_S, daemon_config, last_user_text
from tests.support.daemon import Daemon
from tests.support.events import collect_until, new_conversation, run_turn


@pytest.mark.timeout(180)
async def test_a_servers_prompt_is_a_slash_command(
    daemon_factory: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(
        daemon_config(fake, extra=f"startup_timeout_s = {STARTUP_S:g}\n")
    )
    fake.enqueue(
        Reply().tool_call("mcp__t__echo", {"text": "start"}),
        Reply().text("started"),
        Reply().text("reviewed"),
        Reply().text("noted"),
    )
    async with acp_agent(daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        first = (await rec.until(lambda: rec.of(sid, AvailableCommandsUpdate)))[0]
        assert not [
            c for c in first.available_commands if c.name.startswith("mcp__")
        ]  # not started yet
        await conn.prompt(session_id=sid, prompt=[text_block("start the server")])

        def review() -> Any:
            for update in reversed(rec.of(sid, AvailableCommandsUpdate)):
                for command in update.available_commands:
                    if command.name == "mcp__t__review":
                        return command
            return None

        command = await rec.until(review, STARTUP_S)
        assert command.description == "Ask for a review of one file."
        assert command.input.root.hint == "file=…"
        assert {"compact", "memory"} <= {
            c.name for c in rec.of(sid, AvailableCommandsUpdate)[-1].available_commands
        }

        await conn.prompt(session_id=sid, prompt=[text_block("/mcp__t__review file=app.py")])
        assert last_user_text(fake) == "Review app.py for bugs, briefly."
        assert "reviewed" in rec.text(sid)

        # A resource mentioned as @SERVER:URI goes with the message, as embedded context.
        await conn.prompt(session_id=sid, prompt=[text_block("What is on @t:notes://today?")])
        sent = last_user_text(fake)
        assert sent.startswith("What is on @t:notes://today?")
        assert "<context file='t:notes://today'>\nWater the ficus at noon.\n</context>" in sent

        asked = len(fake.requests)
        with pytest.raises(RequestError) as err:
            await conn.prompt(session_id=sid, prompt=[text_block("/mcp__t__nope")])
        assert "nope" in str(err.value.data) + str(err.value)
        assert len(fake.requests) == asked  # nothing reached the model


@pytest.mark.timeout(180)
async def test_a_server_ready_before_the_editor_came_is_offered_too(
    daemon_factory: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    # `t` is ready before the editor connects; `u` becomes ready once the editor is connected
    # but before its first session: both servers' prompts are offered.
    gate = tmp_path / "gate"
    u = ", ".join(json.dumps(a) for a in (str(SERVER), "gated", str(gate)))
    extra = (
        f"startup_timeout_s = {STARTUP_S * 2:g}\n"
        f"\n[mcp_servers.u]\ncommand = {json.dumps(sys.executable)}\nargs = [{u}]\n"
        f"trust = true\nstartup_timeout_s = {STARTUP_S * 2:g}\n"
    )
    daemon: Daemon = daemon_factory(daemon_config(fake, tools='["mcp:t", "mcp:u"]', extra=extra))
    fake.enqueue(Reply().tool_call("mcp__t__echo", {"text": "start"}), Reply().text("started"))
    client = await daemon.client()
    try:
        cid = await new_conversation(client, str(daemon.workdir))
        await run_turn(client, cid, "start t")  # t ready; u waits for its gate
        async with acp_agent(daemon, tmp_path) as (conn, rec):
            await conn.list_sessions(cwd=str(daemon.workdir))  # the editor is connected
            gate.touch()
            await collect_until(
                client,
                lambda n: (
                    n["method"] == "mcp/statusChanged"
                    and n["params"]["name"] == "u"
                    and n["params"]["status"] == "ready"
                ),
                timeout=STARTUP_S,
            )
            await conn.list_sessions(cwd=str(daemon.workdir))  # it has read the change by now
            sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
            first = (await rec.until(lambda: rec.of(sid, AvailableCommandsUpdate)))[0]
            names = {c.name for c in first.available_commands}
            assert {"mcp__t__review", "mcp__u__review"} <= names
    finally:
        await client.close()
