"""The environment block (docs/design.md, "What the model is told"): where the agent runs and
under which limits, in a few lines the model reads at the start of every request.

Pure: the facts are gathered off the event loop by runtime/surroundings.py; this module words
them. The block stays under `MAX_TOKENS` whatever the repository: each line, path and agent
description is bounded, and when the whole is still too long the git status and then the list
of agents are shortened until it fits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from openvaala_server.domain.permissions import Permissions
from openvaala_server.domain.usage import estimate_text

MAX_TOKENS = 300
STATUS_LINES = 8  # of `git status --short` gathered, then "… and N more"
LINE_CHARS = 100
PATH_CHARS = 160
DESCRIPTION_CHARS = 60
# (status lines, agents listed): tried in turn until the block fits in MAX_TOKENS.
_BUDGETS = ((STATUS_LINES, 6), (4, 6), (4, 3), (0, 3), (0, 0))


@dataclass(frozen=True)
class GitState:
    root: str
    branch: str  # "main", or "detached at 1a2b3c4"
    status: tuple[str, ...] = ()  # `git status --short` lines, at most STATUS_LINES
    more: int = 0  # status lines left out


@dataclass(frozen=True)
class Facts:
    """What the machine says, gathered off the loop."""

    system: str  # "Linux 6.1.0 (x86_64)"
    shell: str
    date: str  # "2026-12-06 (Sunday)"
    cwd: str
    git: GitState | None = None

    def same_place(self, other: Facts) -> bool:
        """Everything but the git status agrees: the block already written still holds."""
        return replace(self, git=_without_status(self.git)) == replace(
            other, git=_without_status(other.git)
        )


def _without_status(git: GitState | None) -> GitState | None:
    return None if git is None else GitState(git.root, git.branch)


def settled(previous: Facts | None, fresh: Facts) -> Facts:
    """The facts a request states: the previous ones while only the git status changed, so that
    the system prompt (and the provider's prompt cache) is not rewritten by every edit."""
    if previous is not None and previous.same_place(fresh):
        return previous
    return fresh


def limits_sentence(perms: Permissions, network: bool) -> str:
    """The agent's sandbox, network and approval settings in one plain sentence."""
    if perms.sandbox == "off":
        where = "Commands and edits run without a sandbox"
    elif perms.sandbox == "read-only":
        where = "Commands run in a read-only sandbox"
    else:
        where = "Commands run in a sandbox that may write only inside the working directory"
    net = "with network access" if network else "without network access"
    if perms.approval == "never":
        asks = "anything the sandbox would block is refused, nobody is asked"
    elif perms.approval == "always":
        asks = "every write and every command not in the allow list asks the user first"
    else:
        asks = "anything the sandbox would block asks the user first"
    return f"{where}, {net}; {asks}."


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _path(path: str) -> str:
    """A path, its middle cut past PATH_CHARS (its ends say the most)."""
    if len(path) <= PATH_CHARS:
        return path
    half = PATH_CHARS // 2
    return path[:half] + "…" + path[-half:]


def environment_text(
    facts: Facts, limits: str, spawnable: Sequence[tuple[str, str]], agent: str
) -> str:
    """The block, as the request carries it. `spawnable` is the agents `spawn_agent` may start
    (name, description); empty when this agent cannot spawn any."""
    text = ""
    for status_lines, agents_listed in _BUDGETS:
        text = _render(facts, limits, spawnable, agent, status_lines, agents_listed)
        if estimate_text(text) <= MAX_TOKENS:
            break
    return text


def _render(
    facts: Facts,
    limits: str,
    spawnable: Sequence[tuple[str, str]],
    agent: str,
    status_lines: int,
    agents_listed: int,
) -> str:
    lines = [
        "<environment>",
        f"Operating system: {_cut(facts.system, LINE_CHARS)}; shell: {facts.shell}",
        f"Today's date: {facts.date}",
        f"Working directory: {_path(facts.cwd)}",
    ]
    git = facts.git
    if git is None:
        lines.append("Git: the working directory is not in a git repository")
    else:
        lines.append(f"Git: repository {_path(git.root)}, branch {_cut(git.branch, LINE_CHARS)}")
        if git.status:
            lines.append("Uncommitted changes when this was written (git status --short):")
            lines.extend("  " + _cut(line, LINE_CHARS) for line in git.status[:status_lines])
            more = git.more + len(git.status[status_lines:])
            if more:
                lines.append(f"  … and {more} more")
        else:
            lines.append("No uncommitted changes when this was written.")
    lines.append(f"You are the agent {_cut(agent, LINE_CHARS)!r}. {limits}")
    if spawnable:
        shown = [
            f"{_cut(n, LINE_CHARS)} ({_cut(d, DESCRIPTION_CHARS)})" if d else _cut(n, LINE_CHARS)
            for n, d in spawnable
        ]
        extra = len(shown) - agents_listed
        listed = "; ".join(shown[:agents_listed]) + (f"; and {extra} more" if extra > 0 else "")
        if agents_listed == 0:
            listed = f"{len(shown)} agents (spawn_agent lists them)"
        lines.append(f"Agents you may spawn: {listed}")
    lines.append("</environment>")
    return "\n".join(lines)
