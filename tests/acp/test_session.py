"""initialize, session/new and a prompt on the demo model that runs a tool, through a real ACP
client spawning `openvaala acp` against a real daemon."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.schema import AvailableCommandsUpdate, ClientCapabilities, Implementation

from tests.acp.harness import acp_agent
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.events import snapshot_of


async def test_prompt_runs_a_tool_and_streams_text(
    shared_daemon: Daemon, workdir: Path, tmp_path: Path
) -> None:
    async with acp_agent(shared_daemon, tmp_path) as (conn, rec):
        # What initialize advertised (the harness initialized already; ask again to read it).
        result = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="pytest", version="1"),
        )
        caps = result.agent_capabilities
        assert caps is not None and caps.load_session is True
        assert caps.prompt_capabilities is not None
        assert caps.prompt_capabilities.image is True
        assert caps.prompt_capabilities.embedded_context is True
        assert caps.session_capabilities is not None and caps.session_capabilities.list is not None
        assert result.agent_info is not None and result.agent_info.name == "openvaala"

        session = await conn.new_session(cwd=str(workdir), mcp_servers=[])
        sid = session.session_id
        # The session is a daemon conversation: the other clients see it under the same id.
        assert session.modes is not None and session.modes.current_mode_id == "default"
        assert session.config_options and session.config_options[0].current_value == "demo"

        response = await conn.prompt(session_id=sid, prompt=[text_block("run: echo hi")])
        assert response.stop_reason == "end_turn"

        calls = rec.tool_calls(sid)
        assert [(c.kind, c.title, c.status) for c in calls] == [("execute", "echo hi", "pending")]
        assert calls[0].raw_input == {"command": "echo hi"}
        final = rec.tool_updates(sid, calls[0].tool_call_id)[-1]
        assert final.status == "completed"
        assert final.content and "hi" in final.content[-1].content.text
        assert "hi" in rec.text(sid)  # the demo model describes what the command printed
        assert rec.of(sid, AvailableCommandsUpdate)
        names = {c.name for c in rec.of(sid, AvailableCommandsUpdate)[0].available_commands}
        assert names == {
            "compact",
            "fork",
            "rewind",
            "agents",
            "usage",
            "init",
            "remember",
            "memory",
        }
        # Its own message is not echoed back as a user message.
        assert rec.user_texts(sid) == []

        # Bad input gets a clear error naming what is wrong; the agent keeps serving.
        with pytest.raises(RequestError) as missing:
            await conn.new_session(cwd=str(workdir / "gone"), mcp_servers=[])
        assert error_data(missing.value)["kind"] == "cwd_missing"
        with pytest.raises(RequestError) as unknown:
            await conn.prompt(session_id="0" * 32, prompt=[text_block("hi")])
        assert "no such session" in str(unknown.value.data)
        assert (await conn.prompt(session_id=sid, prompt=[text_block("still here")])).stop_reason

    client = await shared_daemon.client()
    try:
        snap = await snapshot_of(client, sid)
        types = [i["type"] for i in snap["sessions"][0]["items"]]
        assert types[:3] == ["user_message", "tool_call", "tool_result"]
    finally:
        await client.close()
