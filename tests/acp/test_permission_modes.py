"""The conversation's permission mode in an ACP editor (docs/editors.md, "Agent Client
Protocol"): a config option of category "mode" in session/new and session/load, switched with
session/set_config_option, redrawn when another client switches it, never wider than the agent
allows; every message checked against the ACP schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import ConfigOptionUpdate

from tests.acp.acp_schema import SchemaCheck
from tests.acp.harness import Recorder, acp_agent
from tests.e2e.test_permission_mode_e2e import CONFIG  # default, and one that asks first
from tests.support.daemon import Daemon
from tests.support.events import snapshot_of


def permission(config_options: Any) -> tuple[str, list[str]]:
    """The permission option's value and the values it offers."""
    found = [o for o in config_options if o.id == "permission_mode"]
    assert len(found) == 1, [o.id for o in config_options]
    assert found[0].category == "mode"
    return found[0].current_value, [o.value for o in found[0].options]


def last_permission(rec: Recorder, sid: str) -> tuple[str, list[str]] | None:
    updates = rec.of(sid, ConfigOptionUpdate)
    return permission(updates[-1].config_options) if updates else None


async def test_the_permission_mode_is_a_config_option_every_client_shares(
    daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(CONFIG)
    ws = await daemon.client("ws")
    schema = SchemaCheck()
    try:
        async with acp_agent(daemon, tmp_path, schema=schema) as (conn, rec):
            session = await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])
            sid = session.session_id
            assert permission(session.config_options) == ("auto-edit", ["plan", "ask", "auto-edit"])
            # The model selector is still there, next to it.
            assert {o.id for o in session.config_options or []} == {"model", "permission_mode"}

            # The editor switches to plan: the daemon stores it, and a write is refused.
            answer = await conn.set_config_option(
                config_id="permission_mode", session_id=sid, value="plan"
            )
            assert permission(answer.config_options)[0] == "plan"
            assert (await snapshot_of(ws, sid))["conversation"]["permissionMode"] == "plan"
            target = daemon.workdir / "planned.txt"
            write = json.dumps({"path": str(target), "content": "x"})
            await conn.prompt(session_id=sid, prompt=[text_block(f"call: write_file {write}")])
            assert not target.exists()

            # Another client switches it: the editor's selector follows.
            await ws.request(
                "conversation/setPermissionMode", {"conversationId": sid, "mode": "ask"}
            )
            await rec.until(lambda: (last_permission(rec, sid) or ("",))[0] == "ask")

            # An agent that asks first allows no auto-edit: the selector offers only what it
            # allows, and the daemon's refusal of a wider mode reaches the editor.
            await conn.set_session_mode(session_id=sid, mode_id="careful")
            await rec.until(lambda: last_permission(rec, sid) == ("ask", ["plan", "ask"]))
            with pytest.raises(RequestError, match="auto-edit"):
                await conn.set_config_option(
                    config_id="permission_mode", session_id=sid, value="auto-edit"
                )
        # Opened again, the session shows the stored mode.
        async with acp_agent(daemon, tmp_path, schema=schema) as (conn, rec):
            loaded = await conn.load_session(
                cwd=str(daemon.workdir), session_id=sid, mcp_servers=[]
            )
            assert permission(loaded.config_options) == ("ask", ["plan", "ask"])
        assert schema.check() > 0
    finally:
        await ws.close()
