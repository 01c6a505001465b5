"""The `shell` tool when an editor runs the conversation's commands in its terminals
(docs/design.md, "Commands in the editor's terminal"): the command line handed to the editor
is the one the daemon would run itself — bubblewrap with the call's confinement, the resource
limits, the hidden variables removed — so the sandbox's rules hold in the editor's terminal
too. When they cannot (the limits are control groups the editor's process may not join: the
command then stops before it starts), the call runs here as always and its result says why.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from openvaala_server.tools import limits
from openvaala_server.tools.base import (
    HostFailed,
    TerminalRun,
    ToolContext,
    ToolResult,
    truncate_output,
)
from openvaala_server.tools.sandbox import DAEMON_ENV_PREFIX
from openvaala_server.tools.shell import (
    ShellTool,
    ended,
    noted,
    output_stream,
    prepare,
    run_here,
)

NOT_IN_TERMINAL = (
    "[Ran by OpenVaala, not in the editor's terminal: the editor's terminal may not join this "
    "command's resource limits (control groups), so the sandbox's rules could not hold there; "
    "nothing ran in it.]\n"
)


class HostedShellTool(ShellTool):
    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        terminal = ctx.terminal
        if terminal is None:
            return await super().run(arguments, ctx)
        prepared = await prepare(arguments, ctx)
        if isinstance(prepared, ToolResult):
            return prepared
        bounds = limits.CallLimits(ctx.confinement.limits)
        try:
            call = prepared.call
            # The terminal starts from the editor's environment: what the daemon hides is
            # removed by name (never a value on the command line), what the call needs is set.
            argv = bounds.wrap([*_without(ctx.confinement.hidden_env), *prepared.argv])
            try:
                run = await terminal.run(
                    argv, ctx.cwd, prepared.env, call.timeout_s, ctx.call_id, output_stream(ctx)
                )
            except HostFailed as exc:
                return ToolResult(f"The editor could not run the command: {exc}", is_error=True)
            if run.exit_code != 0 and any(f in run.output for f in bounds.group_files()):
                here = await run_here(prepared, bounds, ctx)
                return ToolResult(NOT_IN_TERMINAL + here.output, here.is_error, here.truncated)
            return noted(_terminal_result(run, call.timeout_s, ctx), prepared, bounds, ctx)
        finally:
            bounds.close()


def _terminal_result(run: TerminalRun, timeout_s: float, ctx: ToolContext) -> ToolResult:
    text, cut = truncate_output(run.output, ctx.output_limit)
    code = run.exit_code
    if code is None and run.signal is not None and not run.timed_out:
        text += f"\n[killed by {run.signal}]"
    return ended(text, cut or run.truncated, code, run.timed_out, timeout_s)


def _without(hidden: frozenset[str]) -> list[str]:
    names = sorted({*hidden, *(k for k in os.environ if k.startswith(DAEMON_ENV_PREFIX))})
    env = shutil.which("env") or "/usr/bin/env"
    return [env, *(arg for name in names for arg in ("-u", name)), "--"]
