"""Agents as session modes, models as the model selector, usage, and the slash commands."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import text_block
from acp.schema import ConfigOptionUpdate, CurrentModeUpdate, UsageUpdate

from tests.acp.harness import acp_agent
from tests.support.daemon import Daemon
from tests.support.events import snapshot_of

TWO_OF_EACH = """
[models.demo]
provider = "demo"
pace_ms = 0

[models.other]
provider = "demo"
pace_ms = 0
context_window = 8000

[agents.default]
description = "General assistant"
model = "demo"

[agents.reviewer]
description = "Reads and comments"
model = "demo"
"""


async def test_modes_models_and_usage(daemon_factory: Any, tmp_path: Path) -> None:
    daemon: Daemon = daemon_factory(TWO_OF_EACH)
    ws = await daemon.client("ws")
    try:
        async with acp_agent(daemon, tmp_path) as (conn, rec):
            session = await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])
            sid = session.session_id
            assert session.modes is not None
            assert {m.id for m in session.modes.available_modes} == {"default", "reviewer"}
            assert session.config_options is not None
            model = session.config_options[0]
            assert (model.id, model.category, model.current_value) == ("model", "model", "demo")
            assert {o.value for o in model.options} == {"demo", "other"}

            await conn.set_session_mode(session_id=sid, mode_id="reviewer")
            await conn.set_config_option(config_id="model", session_id=sid, value="other")
            snap = await snapshot_of(ws, sid)
            assert (snap["conversation"]["agent"], snap["conversation"]["model"]) == (
                "reviewer",
                "other",
            )
            # The editor hears the changes as the other clients do.
            await rec.until(lambda: rec.of(sid, CurrentModeUpdate))
            assert rec.of(sid, CurrentModeUpdate)[-1].current_mode_id == "reviewer"
            await rec.until(lambda: rec.of(sid, ConfigOptionUpdate))
            assert rec.of(sid, ConfigOptionUpdate)[-1].config_options[0].current_value == "other"

            # A change made from another client reaches the editor's selectors.
            await ws.request("conversation/setModel", {"conversationId": sid, "model": "demo"})
            await rec.until(
                lambda: (
                    rec.of(sid, ConfigOptionUpdate)[-1].config_options[0].current_value == "demo"
                )
            )

            await conn.prompt(session_id=sid, prompt=[text_block("hello")])
            usage = rec.of(sid, UsageUpdate)
            assert usage and usage[-1].size == 32000 and usage[-1].used > 0
    finally:
        await ws.close()


async def test_slash_commands(shared_daemon: Daemon, workdir: Path, tmp_path: Path) -> None:
    async with acp_agent(shared_daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("first")])
        await conn.prompt(session_id=sid, prompt=[text_block("second")])

        await conn.prompt(session_id=sid, prompt=[text_block("/usage")])
        assert "Context:" in rec.text(sid) and "of 32,000 tokens" in rec.text(sid)

        await conn.prompt(session_id=sid, prompt=[text_block("/agents")])
        assert "`default` (default): General assistant" in rec.text(sid)

        before = len(rec.text(sid))
        await conn.prompt(session_id=sid, prompt=[text_block("/rewind")])
        said = rec.text(sid)[before:]
        assert "Rewound into a new conversation" in said and "> second" in said

        await conn.prompt(session_id=sid, prompt=[text_block("/fork")])
        # The list comes from the index, which follows the journals a moment later.
        for _ in range(50):
            listed = await conn.list_sessions(cwd=str(workdir))
            titles = sorted(s.title or "" for s in listed.sessions)
            if len(titles) == 3:
                break
            await asyncio.sleep(0.1)
        assert titles == ["first", "first (fork)", "first (rewind)"]

        await conn.prompt(session_id=sid, prompt=[text_block("/compact")])
        assert "ompact" in rec.text(sid)[-200:]
