"""Running hooks: each configured command gets the event as JSON on its stdin, inside the
agent's sandbox unless its hook says `sandbox = false` (tools/sandbox.py, as for the shell
tool), and is killed with its whole process group at its `timeout_s`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Mapping
from pathlib import Path

from openvaala_server.config import HookConfig
from openvaala_server.domain.hooks import HookRun
from openvaala_server.domain.permissions import Confinement
from openvaala_server.tools import sandbox


async def run_hook(
    hook: HookConfig, event: Mapping[str, object], cwd: Path, confinement: Confinement
) -> HookRun:
    argv = list(hook.command)
    env = sandbox.scrubbed_env(confinement.hidden_env)  # never the daemon's secrets
    if hook.sandbox:
        try:
            bwrap = await sandbox.usable_bwrap(confinement.mode)
        except sandbox.SandboxUnavailable as exc:
            return HookRun(hook, None, problem=str(exc))
        if bwrap is not None:
            argv = sandbox.bwrap_argv(bwrap, argv, cwd, confinement)
        env = sandbox.sandboxed_env(env, confinement)
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            # Its own process group: a time-out kills everything it started.
            start_new_session=True,
        )
    except OSError as exc:
        return HookRun(hook, None, problem=f"it could not start: {exc}")
    data = json.dumps(event, ensure_ascii=False).encode()
    try:
        async with asyncio.timeout(hook.timeout_s):
            out, err = await process.communicate(data)
    except TimeoutError:
        _kill_group(process.pid)
        await process.wait()
        return HookRun(
            hook, None, problem=f"it did not finish within timeout_s = {hook.timeout_s:g} s"
        )
    except BaseException:  # interrupted: nothing it started outlives the turn
        _kill_group(process.pid)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        raise
    return HookRun(
        hook,
        process.returncode,
        out.decode(errors="replace"),
        err.decode(errors="replace"),
    )


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
