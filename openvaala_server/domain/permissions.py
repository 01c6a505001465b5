"""What an agent's tools may do: the sandbox mode, the network, and when the user is asked.

Pure data shared by the configuration (which parses it), the tools (which enforce the
confinement of one call) and the approval policy (which decides whether a call asks first).
docs/security.md describes the modes as a user sees them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

SandboxMode = Literal["read-only", "workspace", "off"]
ApprovalMode = Literal["always", "escalate", "never"]

SANDBOX_MODES: Final[tuple[SandboxMode, ...]] = ("read-only", "workspace", "off")
APPROVAL_MODES: Final[tuple[ApprovalMode, ...]] = ("always", "escalate", "never")
# Version-control directories: read-only inside `workspace`, since what they hold (hooks, config)
# runs unconfined at the user's next command there (docs/security.md).
VCS_DIRS: Final = frozenset({".git", ".hg", ".svn", ".jj"})


# What an agent's `limits` table may name (docs/configuration.md).
LIMIT_KEYS: Final = ("processes", "memory_mb", "tmp_mb")


@dataclass(frozen=True)
class Limits:
    """What one shell command may use, all its processes together (docs/security.md).

    The defaults are far above what a build or a test run needs; they stop a fork bomb, a
    runaway allocation or a /tmp filled up to RAM before the machine does."""

    processes: int = 4096
    memory_mb: int = 16384
    tmp_mb: int = 4096


# The `Bound.agent` of the rule a conversation's permission mode adds (domain/permission_mode.py).
MODE_BOUND: Final = "permission mode"


@dataclass(frozen=True)
class Bound:
    """The approval rules of an agent above a subagent, which the subagent obeys too."""

    agent: str
    approval: ApprovalMode
    allow: tuple[str, ...] = ()


@dataclass(frozen=True)
class Permissions:
    """An agent's `sandbox`, `network`, `approval`, `allow` and `deny` settings.

    For a subagent, `sandbox`, `network` and `deny` are already the stricter of its own and its
    ancestors' (domain/inheritance.py); `inherited` holds its ancestors' approval rules, each of
    which a call must pass as well (docs/security.md, "Subagents").
    """

    sandbox: SandboxMode = "workspace"
    network: bool = False
    approval: ApprovalMode = "escalate"
    # Shell command patterns (fnmatch: `*` matches anything) that never ask / are always refused.
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    inherited: tuple[Bound, ...] = ()

    @property
    def approvals(self) -> tuple[ApprovalMode, ...]:
        """This agent's approval mode and every ancestor's."""
        return (self.approval, *(b.approval for b in self.inherited))


@dataclass(frozen=True)
class Confinement:
    """The limits one tool call runs under, as the runtime hands them to the tool.

    `mode` is the agent's sandbox mode, or "off" for one call the user approved to run outside
    the sandbox. `protected` (the daemon's data and config directories) stays unreadable and
    unwritable in every mode, "off" included: the token file there grants the whole API.
    """

    mode: SandboxMode = "off"
    network: bool = True
    protected: tuple[Path, ...] = ()
    # Names removed from the environment of every process a tool starts (API keys, OPENVAALA_*).
    hidden_env: frozenset[str] = field(default_factory=frozenset)
    limits: Limits = field(default_factory=Limits)
    # For a call the user approved: the files it may write, resolved when the prompt showed
    # them; the file tools write there or fail (tools/pinned.py). None: not pinned.
    approved: tuple[Path, ...] | None = None
    # Why no call may ask to leave the sandbox here (plan mode, "never"); None: one may ask.
    no_way_out: str | None = None


@dataclass(frozen=True)
class Access:
    """What one tool call would do, as far as can be told before it runs.

    Each built-in tool states it (`access(arguments, cwd)`); the approval policy decides from it
    whether the call runs at once, asks the user first, or is refused.
    """

    # One line a user reads in an approval prompt ("rm -rf build", "write src/app.py").
    summary: str = ""
    # A shell command line the call runs (matched against `allow` / `deny`).
    command: str | None = None
    # Files the call would create, change or delete, symlinks resolved.
    writes: tuple[Path, ...] = ()
    # The model asks for this call to run outside the sandbox, giving this reason.
    outside_sandbox: str | None = None
    # The host the call reaches over the network itself (web_fetch): the agent's `network`.
    network: str | None = None


def repository_part(path: Path, workspace: Path) -> str | None:
    """The version-control directory of `workspace` that `path` lies in (its name), if any.

    Both are real paths; `path` outside `workspace` is none of its business."""
    if not path.is_relative_to(workspace):
        return None
    return next((part for part in path.relative_to(workspace).parts if part in VCS_DIRS), None)
