"""The daemon's own git queries (the branch and status the model is told), run confined.

The repository is the agent's to change: a `core.fsmonitor`, a filter, a hook or a `.git` file
pointing at a gitdir the agent wrote would otherwise run inside the daemon, unsandboxed, at the
next turn (docs/security.md, "Attacks and what stops them"). So git runs under the `read-only`
sandbox with no network and the daemon's private paths hidden, told not to run what it can be
told not to (fsmonitor, hooks, submodules, optional locks), with a minimal environment.

Where bubblewrap cannot run, no git process is started at all: the branch is read from HEAD
(`git_head`) and the status is left out.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from openvaala_server.domain.permissions import Confinement
from openvaala_server.tools import sandbox

TIMEOUT_S: Final = 5.0
# Configuration given on the command line wins over the repository's.
SAFE_OPTIONS: Final = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.untrackedCache=false",
    "--no-optional-locks",
)
# Passed to a confined git instead of the daemon's environment (no key, no OPENVAALA_*).
_KEPT_ENV: Final = ("PATH", "HOME", "USER", "LOGNAME", "XDG_CONFIG_HOME")


class Unconfined(Exception):
    """bubblewrap is missing or cannot run here: no git was started."""


def _env() -> dict[str, str]:
    env = {key: os.environ[key] for key in _KEPT_ENV if key in os.environ}
    return {**env, "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}


def run(cwd: str, args: Sequence[str], protected: Sequence[Path] = ()) -> str | None:
    """git's output for `args` in `cwd`, None when git failed; Unconfined where it cannot be
    run in the sandbox."""
    bwrap = sandbox.bwrap_path()
    if bwrap is None:
        raise Unconfined("bubblewrap is not installed")
    root = find_root(cwd)
    if root is None:
        return None  # not a repository: nothing to ask git
    confinement = Confinement(mode="read-only", network=False, protected=tuple(protected))
    # The sandbox binds the repository's root, which may lie above the cwd (under the private
    # /tmp it would otherwise be missing).
    argv = sandbox.bwrap_argv(bwrap, ["git", *SAFE_OPTIONS, "-C", cwd, *args], root, confinement)
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=TIMEOUT_S,
            env=_env(),
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    except OSError as exc:
        raise Unconfined(str(exc)) from exc
    if done.returncode != 0 and done.stderr.startswith("bwrap:"):
        raise Unconfined(done.stderr.strip())
    return done.stdout if done.returncode == 0 else None


def find_root(cwd: str) -> Path | None:
    """The nearest directory at or above `cwd` holding a `.git`, without running git."""
    here = Path(os.path.realpath(cwd))
    for folder in (here, *here.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def git_head(root: Path) -> str:
    """The branch checked out in `root`, read from HEAD (following a `gitdir:` file)."""
    dot_git = root / ".git"
    try:
        if dot_git.is_file():
            line = dot_git.read_text(errors="replace").strip()
            dot_git = root / line.removeprefix("gitdir:").strip()
        head = (dot_git / "HEAD").read_text(errors="replace").strip()
    except OSError:
        return "unknown"
    if head.startswith("ref: "):
        return head.removeprefix("ref: ").removeprefix("refs/heads/")
    return f"detached at {head[:7]}" if head else "unknown"
