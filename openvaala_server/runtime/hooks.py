"""Running hooks: each configured command gets the event as JSON on its stdin, inside the
agent's sandbox unless its hook says `sandbox = false` (tools/sandbox.py, as for the shell
tool), and is killed with its whole process group at its `timeout_s`.

Its output is read as it comes, keeping at most `OUTPUT_MAX_BYTES` of each stream (a hook that
floods its output costs no memory), and the hook is over when its own process exits: what it left
running in its process group is killed then, so a background child holding the pipes open neither
delays the turn nor turns a finished hook into a timed-out one."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from pathlib import Path

from openvaala_server.domain.hooks import HookConfig, HookRun
from openvaala_server.domain.permissions import Confinement
from openvaala_server.protocol import codec
from openvaala_server.tools import sandbox

# What is kept of each of a hook's streams; the rest is read and dropped (a notice shows less).
OUTPUT_MAX_BYTES = 64_000
# How long the readers may still take once the hook's process group is gone.
_DRAIN_S = 2.0


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
    data = codec.text(event).encode()
    assert process.stdout is not None and process.stderr is not None
    readers = [
        asyncio.ensure_future(_bounded(process.stdout)),
        asyncio.ensure_future(_bounded(process.stderr)),
    ]
    feeding = asyncio.ensure_future(_feed(process, data))
    try:
        async with asyncio.timeout(hook.timeout_s):
            await _exited(process)
    except TimeoutError:
        _kill_group(process.pid)
        await _drain(process, [*readers, feeding])
        return HookRun(
            hook, None, problem=f"it did not finish within timeout_s = {hook.timeout_s:g} s"
        )
    except BaseException:  # interrupted: nothing it started outlives the turn
        _kill_group(process.pid)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        for task in (*readers, feeding):
            task.cancel()
        raise
    _kill_group(process.pid)  # whatever it left running in its group ends with it
    out, err = await _drain(process, [*readers, feeding])
    return HookRun(
        hook, process.returncode, out.decode(errors="replace"), err.decode(errors="replace")
    )


async def _exited(process: asyncio.subprocess.Process) -> None:
    """Until the hook's own process has exited. Not `process.wait()`: on Python 3.11 that also
    waits for every pipe to close, which a child left running keeps open."""
    while process.returncode is None:  # noqa: ASYNC110 - no event is set at the exit itself
        await asyncio.sleep(0.05)


async def _bounded(stream: asyncio.StreamReader) -> bytes:
    kept = bytearray()
    while chunk := await stream.read(65_536):
        if len(kept) < OUTPUT_MAX_BYTES:
            kept += chunk[: OUTPUT_MAX_BYTES - len(kept)]
    return bytes(kept)


async def _feed(process: asyncio.subprocess.Process, data: bytes) -> bytes:
    """The event on the hook's stdin; a hook that does not read it is not an error."""
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(data)
        await process.stdin.drain()
    process.stdin.close()
    return b""


async def _drain(
    process: asyncio.subprocess.Process, tasks: list[asyncio.Future[bytes]]
) -> tuple[bytes, bytes]:
    """What the readers kept, once the group is gone; readers still held open by a process
    outside the group are given up after `_DRAIN_S`."""
    done, pending = await asyncio.wait(tasks, timeout=_DRAIN_S)
    for task in pending:
        task.cancel()
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(_DRAIN_S):
            await _exited(process)
    out, err = (t.result() if t in done and not t.cancelled() else b"" for t in tasks[:2])
    return out, err


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
