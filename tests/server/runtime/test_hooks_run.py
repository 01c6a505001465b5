"""Running one hook (runtime/hooks.py) as a real process, outside the sandbox: a hook that floods
its output is cut to a bound and killed at its time-out, and a hook that exits while something it
started still holds its pipes is over when it exits, with its output."""

from __future__ import annotations

import asyncio
from pathlib import Path

from openvaala_server.domain.hooks import HookConfig
from openvaala_server.domain.permissions import Confinement
from openvaala_server.runtime.hooks import OUTPUT_MAX_BYTES, run_hook


def _hook(script: str, timeout_s: float) -> HookConfig:
    return HookConfig("pre_tool", ("/bin/sh", "-c", script), timeout_s=timeout_s, sandbox=False)


async def test_a_flooding_hook_is_killed_at_its_timeout_with_its_output_bounded(
    tmp_path: Path,
) -> None:
    # `yes` writes as fast as it is read: the old reader kept all of it, and never returned.
    run = await asyncio.wait_for(
        run_hook(_hook("yes", 2), {"event": "pre_tool"}, tmp_path, Confinement(mode="off")), 30
    )
    assert run.problem is not None and "timeout_s = 2 s" in run.problem
    assert run.exit_code is None


async def test_a_hook_that_floods_then_exits_keeps_only_the_bound(tmp_path: Path) -> None:
    script = "head -c 50000000 /dev/zero | tr '\\0' x; echo oops >&2; exit 3"
    run = await asyncio.wait_for(
        run_hook(_hook(script, 60), {"event": "pre_tool"}, tmp_path, Confinement(mode="off")), 60
    )
    assert run.exit_code == 3 and run.problem is None
    assert len(run.stdout) == OUTPUT_MAX_BYTES and run.stderr == "oops\n"


async def test_a_hook_that_leaves_a_child_holding_its_pipes_is_over_when_it_exits(
    tmp_path: Path,
) -> None:
    # The background `sleep` keeps stdout open: reading to the end waited for it, and the hook
    # that had answered at once was reported as timed out, its answer lost.
    run = await asyncio.wait_for(
        run_hook(
            _hook("sleep 600 & echo allowed", 30),
            {"event": "pre_tool"},
            tmp_path,
            Confinement(mode="off"),
        ),
        25,
    )
    assert run.problem is None and run.exit_code == 0
    assert run.stdout == "allowed\n"
