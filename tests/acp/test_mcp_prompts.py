"""MCP prompts and resources in an ACP editor, through `openvaala acp` against a real daemon and
a real SDK-built server: once the server is ready its prompt is offered as `/mcp__t__review` (an
`available_commands_update` the daemon's `mcp/statusChanged` brought), running it sends the
server's filled-in prompt as the message, and `@t:notes://today` sends that resource's text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import AvailableCommandsUpdate

from tests.acp.harness import acp_agent
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import STARTUP_S, daemon_config, last_user_text
from tests.support.daemon import Daemon


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
