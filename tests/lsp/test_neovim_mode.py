"""Headless Neovim shows the conversation's permission mode in its statusline, switches it with
`:OpenVaalaMode` (offering only the modes the agent allows) and follows a switch made by another
client (docs/editors.md, "Neovim")."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.lsp.nvim_support import needs_nvim, run_driver
from tests.support.daemon import Daemon
from tests.support.events import collect_until, new_conversation

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "asks before every write"
model = "demo"
approval = "always"
"""


@needs_nvim
async def test_neovim_shows_and_switches_the_permission_mode(
    daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(CONFIG)
    python = await daemon.client()
    try:
        cid = await new_conversation(python, str(daemon.workdir))
        await python.subscribe(cid)
        driver = asyncio.create_task(run_driver(daemon, tmp_path, "nvim_mode_driver.lua", cid))

        def plan_announced(note: Any) -> bool:
            params = note.get("params") or {}
            return bool(
                note.get("method") == "conversation/updated"
                and params.get("conversation", {}).get("permissionMode") == "plan"
            )

        await collect_until(python, plan_announced, timeout=40)
        await python.request(
            "conversation/setPermissionMode", {"conversationId": cid, "mode": "ask"}
        )
        result, log = await driver
    finally:
        await python.close()
    assert "error" not in result, (result, log)
    assert result["before"].endswith("[ask]")
    assert result["completion"] == ["plan", "ask"]  # no auto-edit for an agent that asks
    assert "[plan]" in result["shown"]["plan"]
    assert "[ask]" in result["shown"]["ask"]  # switched by another client
    assert "auto-edit" in str(result["refused"])
    assert result["after"].endswith("[ask]")
