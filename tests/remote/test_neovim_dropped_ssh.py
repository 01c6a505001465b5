"""Neovim over `--remote` when ssh drops mid-turn: the daemon over there never stopped the
turn, so once the bridge is connected again the statusline still marks it running (`●`), and
the mark goes when the turn ends (docs/editors.md, "When the daemon stops"). Headless Neovim
with editors/nvim, the bridge through the test's sshd, the model faked at the wire."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.lsp.nvim_support import RESULT, ROOT, driver_result, headless_nvim, needs_nvim, nvim_env
from tests.remote.test_editors_remote import here
from tests.support.daemon import Daemon
from tests.support.sshd import Sshd


async def _until_marked(mark: Path, nvim: Any) -> None:
    """Until the driver made `mark` (it waits on the test there), or Neovim quit."""
    for _ in range(1200):  # a minute, even on a loaded machine
        if await asyncio.to_thread(mark.exists) or nvim.returncode is not None:
            return
        await asyncio.sleep(0.05)


@needs_nvim
async def test_neovim_keeps_the_running_mark_when_ssh_drops(
    client_env: dict[str, str],
    local: Daemon,
    remote: Daemon,
    fake: FakeProvider,
    sshd: Sshd,
    tmp_path: Path,
) -> None:
    gate = Gate()
    fake.enqueue(Reply().text("before the drop, ").wait(gate).text("after ", "it."))
    marks = tmp_path / "marks"
    marks.mkdir()
    out = tmp_path / RESULT
    env = nvim_env(
        here(local, client_env).env,
        tmp_path,
        out,
        OPENVAALA_TEST_SUPPORT=str(ROOT / "tests" / "lsp" / "nvim_support.lua"),
        OPENVAALA_TEST_MARKS=str(marks),
        OPENVAALA_TEST_CWD=str(remote.workdir),
    )
    driver = Path(__file__).with_name("nvim_dropped_ssh_driver.lua")
    try:
        # Its own process group: the bridge it runs is stopped with it.
        async with headless_nvim(driver, tmp_path, env, own_group=True) as nvim:
            await _until_marked(marks / "streaming", nvim)
            assert sshd.kill_clients() >= 1
            await _until_marked(marks / "reconnected", nvim)
            gate.open()  # the turn goes on over there, and ends
            result, log = await driver_result(nvim, out, 120)
    finally:
        gate.open()
    assert "error" not in result, (result, log)
    assert "●" in result["before_drop"]
    assert any("reconnecting" in m for m in result["said"]), result["said"]
    assert "●" in result["after_reconnect"], result  # still running over there
    assert result["answer"]["status"] == "completed"
    assert "●" not in result["after_turn"]
