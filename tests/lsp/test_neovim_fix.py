"""Headless Neovim fixes a conversation whose agent is not configured here (`:OpenVaalaAgent`,
with a name or picked) and points it at another directory (`:OpenVaalaCwd`, relative)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.lsp.nvim_support import needs_nvim, run_driver
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"

[agents.other]
description = "Another"
model = "demo"
"""


@needs_nvim
async def test_neovim_sets_the_agent_and_the_working_directory(
    daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(CONFIG + '\n[agents.coder]\nmodel = "demo"\n')
    python = await daemon.client(reconnect=False)
    try:
        cid = await new_conversation(python, str(daemon.workdir), agent="coder")
        await run_turn(python, cid, "hello")
    finally:
        await python.close()
    daemon.stop()
    daemon.config_path.write_text(CONFIG)
    daemon.start()

    result, log = await run_driver(daemon, tmp_path, "nvim_fix_driver.lua", cid)
    assert "error" not in result, (result, log)
    assert "agent **coder** is not configured here" in result["before"]
    assert ":OpenVaalaAgent" in result["before"]
    assert "is not configured here" not in result["after_other"]
    # Without a name, the configured agents are offered.
    [select] = result["selects"]
    assert select["items"] == ["default — General assistant", "other — Another"]
    assert result["prompt"]["status"] == "completed"
    elsewhere = Path(result["cwd"]) / "elsewhere"
    assert f"> `{elsewhere}`" in result["transcript"]
    assert f"\n{elsewhere}\n" in result["transcript"]
