"""Memory and /init in an ACP editor (Zed, CodeCompanion), through `openvaala acp` against a real
daemon on the offline demo model: /remember keeps a note a new session is given, /memory shows the
files, /init runs a turn that asks the agent to write AGENTS.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp import text_block
from acp.schema import AvailableCommandsUpdate

from openvaala_server import prompts
from tests.acp.harness import acp_agent
from tests.support.daemon import DEFAULT_CONFIG, Daemon


async def test_remember_memory_and_init(daemon_factory: Any, tmp_path: Path) -> None:
    daemon: Daemon = daemon_factory(DEFAULT_CONFIG)
    project = daemon.workdir / ".openvaala" / "MEMORY.md"
    user = daemon.config_path.parent / "MEMORY.md"
    ws = await daemon.client("ws")
    try:
        async with acp_agent(daemon, tmp_path) as (conn, rec):
            sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
            await conn.prompt(session_id=sid, prompt=[text_block("/remember use uv, not pip")])
            offered = rec.of(sid, AvailableCommandsUpdate)[0].available_commands
            assert {"init", "remember", "memory"} <= {c.name for c in offered}
            assert project.read_text() == "- use uv, not pip\n"
            assert f"Remembered in `{project}`" in rec.text(sid)
            await conn.prompt(session_id=sid, prompt=[text_block("/remember user be brief")])
            assert user.read_text() == "- be brief\n"

            before = len(rec.text(sid))
            await conn.prompt(session_id=sid, prompt=[text_block("/memory")])
            said = rec.text(sid)[before:]
            assert f"Memory (project): `{project}`" in said and "- use uv, not pip" in said
            assert f"Memory (user): `{user}`" in said and "- be brief" in said

            response = await conn.prompt(session_id=sid, prompt=[text_block("/init")])
            assert response.stop_reason == "end_turn"
            read = await ws.request("conversation/read", {"conversationId": sid})
            mine = [i["text"] for i in read["items"] if i["type"] == "user_message"]
            assert mine == [prompts.init_request()]

            other = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
            trace = await ws.request("conversation/context", {"conversationId": other})
            memory = "".join(p["text"] for p in trace["parts"] if p["kind"] == "memory")
            assert "- use uv, not pip" in memory and "- be brief" in memory
    finally:
        await ws.close()
