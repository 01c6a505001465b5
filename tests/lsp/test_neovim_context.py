"""Context in a real editor: headless Neovim with editors/nvim against a real daemon shows the
trace of the next request in a float, the gauge in its statusline, pins a picked message, and
finds what a summary replaced (docs/editors.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.lsp.nvim_support import needs_nvim, run_driver
from tests.support.daemon import DEFAULT_CONFIG
from tests.support.events import new_conversation


@needs_nvim
async def test_neovim_context_pin_gauge_and_replaced(daemon_factory: Any, tmp_path: Path) -> None:
    daemon = daemon_factory(DEFAULT_CONFIG + "refresh_every = 5\n")
    python = await daemon.client("watcher")
    try:
        cid = await new_conversation(python, str(daemon.workdir))
        result, log = await run_driver(daemon, tmp_path, "nvim_context_driver.lua", cid, timeout=90)
    finally:
        await python.close()
    assert "error" not in result, (result.get("error"), log[-2000:])
    # The usage's text, then the permission mode in force.
    assert result["statusline"].endswith("· refresh in 3 [auto-edit]")
    assert result["pin_choices"][0] == "you: first question"
    assert len(result["pinned"]) == 1
    float_lines = result["float"]
    assert float_lines[0].startswith("Next request: about ")
    assert any(line.startswith("Summary: ") for line in float_lines)
    assert any(line.startswith("Pinned (1): ") for line in float_lines)
    assert any(line.startswith("Left out: ") for line in float_lines)
    assert float_lines[-1].startswith("context ")
    replaced = [i.get("text") for i in result["replaced"]["items"]]
    assert "second question" in replaced and "first question" not in replaced
    assert result["replaced"]["location"]["uri"] == f"openvaala://conversation/{cid}"
    assert result["cursor_line"] == "## You"  # the transcript, at the first replaced message
