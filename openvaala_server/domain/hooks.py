"""Hooks (docs/configuration.md, "Hooks"): which configured commands run at an event, what
a run's outcome means, and what clients are shown of it. Pure: the runner is runtime/hooks.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Final

HOOK_EVENTS: Final = ("pre_tool", "post_tool", "turn_end", "prompt_submit")
# Events about one tool call: only their hooks take a `matcher`.
HOOK_TOOL_EVENTS: Final = ("pre_tool", "post_tool")


@dataclass(frozen=True)
class HookConfig:
    """One `[[hooks]]` entry: a command run at an event (docs/configuration.md, "Hooks")."""

    event: str  # one of HOOK_EVENTS
    command: tuple[str, ...]
    # A glob of the tool names it runs for (pre_tool / post_tool); None: every tool.
    matcher: str | None = None
    timeout_s: float = 30.0
    # True: inside the agent's sandbox, like its shell commands; False: outside it.
    sandbox: bool = True


# The most of a hook's output kept in its notice (and in a block's reason).
OUTPUT_LIMIT: Final = 4000


@dataclass(frozen=True)
class HookRun:
    """How one hook's process ended. `problem` is set when it did not run to an exit of its own:
    it could not start, or it was killed at its time-out."""

    hook: HookConfig
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    problem: str | None = None

    @property
    def failed(self) -> bool:
        return self.problem is not None or self.exit_code != 0


def matching(hooks: Sequence[HookConfig], event: str, tool: str | None = None) -> list[HookConfig]:
    """The hooks of `event`, in configuration order; for a tool event, those whose `matcher`
    (a glob, e.g. `shell` or `mcp__*`) matches the tool's name."""
    return [
        h
        for h in hooks
        if h.event == event
        and (
            h.event not in HOOK_TOOL_EVENTS
            or h.matcher is None
            or fnmatchcase(tool or "", h.matcher)
        )
    ]


def describe(hook: HookConfig) -> str:
    return " ".join(hook.command)


def _bounded(text: str) -> str:
    text = text.strip()
    return text if len(text) <= OUTPUT_LIMIT else text[:OUTPUT_LIMIT] + " […]"


def block_reason(run: HookRun, tool: str) -> str:
    """What the model reads instead of a result when a pre_tool hook refuses the call: the
    hook's stderr, as the hook's author wrote it."""
    why = _bounded(run.stderr) or run.problem or f"it exited with code {run.exit_code}"
    return f"A pre_tool hook ({describe(run.hook)}) blocked this call of {tool}: {why}"


def notice_text(run: HookRun) -> str | None:
    """What every client shows of a run: its output and how it ended; None for a hook that
    succeeded silently."""
    output = _bounded("\n".join(t for t in (run.stdout.strip(), run.stderr.strip()) if t))
    if not run.failed and not output:
        return None
    head = f"{run.hook.event} hook `{describe(run.hook)}`"
    if run.problem is not None:
        head += f": {run.problem}"
    elif run.exit_code != 0:
        head += f" exited with code {run.exit_code}"
    return f"{head}\n{output}" if output else head
