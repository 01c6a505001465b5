"""Headless Neovim shows the toolbox: the agent's plan and a patch's diff in the transcript
buffer, and `:OpenVaalaMcp` tells the user each MCP server's state (a real SDK server ready, one
that cannot run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes.providers import FakeProvider
from tests.lsp.nvim_support import needs_nvim, run_driver
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn
from tests.support.toolbox import ORIGINAL, plan_and_patch, toolbox_config


@pytest.mark.timeout(180)
@needs_nvim
async def test_neovim_shows_the_plan_the_diff_and_the_mcp_servers(
    daemon_factory: Any, fake_openai: FakeProvider, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(config=toolbox_config(fake_openai))
    (daemon.workdir / "greet.py").write_text(ORIGINAL)
    plan_and_patch(fake_openai)
    python = await daemon.client(reconnect=False)
    try:
        cid = await new_conversation(python, str(daemon.workdir))
        notes = await run_turn(python, cid, "fix greet")
        assert notes[-1]["params"]["status"] == "completed"
    finally:
        await python.close()

    result, log = await run_driver(daemon, tmp_path, "nvim_toolbox_driver.lua", cid)
    assert "error" not in result, (result, log)
    transcript = result["transcript"]
    assert "## Plan 1/3" in transcript and "- [x] Read the code" in transcript
    assert "- [ ] **Patch greet.py** _(in progress)_" in transcript
    assert "```diff\n" in transcript and "+    return 'hello'" in transcript
    [shown] = [m for m in result["messages"] if "MCP servers" in m["text"]]
    assert "t: ready, " in shown["text"] and "echo" in shown["text"]
    assert "gone: failed: cannot run 'openvaala-no-such-mcp-server'" in shown["text"]
