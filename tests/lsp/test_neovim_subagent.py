"""A subagent's transcript in headless Neovim against the real daemon (demo model): the parent's
task is labelled as the parent's, not as the user's, and the statusline there shows the
subagent's own usage, not the root agent's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.lsp.nvim_support import needs_nvim, run_driver
from tests.support.daemon import Daemon

CONFIG = """
default_agent = "main"

[models.demo]
provider = "demo"
pace_ms = 0

[agents.worker]
description = "Helps"
model = "demo"

[agents.main]
description = "Root"
model = "demo"
"""


@needs_nvim
async def test_neovim_subagent_transcript(daemon_factory: Any, tmp_path: Path) -> None:
    daemon: Daemon = daemon_factory(config=CONFIG)
    result, log = await run_driver(daemon, tmp_path, "nvim_subagent_driver.lua", "")
    assert "error" not in result, (result, log)
    assert result["turn"]["status"] == "completed"
    [picker] = result["selects"]
    assert picker[0].startswith("main — ") and picker[1].startswith("  worker — ")
    lines = result["transcript"]
    assert lines[0].endswith("› worker (subagent)")
    assert "> subagent of **main**" in lines
    # The task came from the parent agent, not from the user.
    assert "## You" not in lines
    task = lines.index("## Task from main (parent agent)")
    assert lines[task + 2] == "say hello"
    # Its own usage: in the transcript's last line and in the statusline of its buffer.
    assert result["child_usage"] != result["root_usage"]
    assert lines[-1].endswith(f"· context {result['child_usage']}")
    assert result["statusline"].startswith(f"OpenVaala {result['child_usage']}")
