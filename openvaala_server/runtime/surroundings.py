"""What a session's requests are told about where they run (docs/design.md, "What the model is
told"), gathered in a worker thread: the machine and the date, the git repository around the
working directory, the instruction files from the repository root down, and the memory files.

Gathered again at the start of each turn (a branch switched, an AGENTS.md edited between turns
shows in the next one), never on the event loop: git and a network mount may be slow.
"""

from __future__ import annotations

import os
import platform
import stat
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from openvaala_server.config import Config, config_path
from openvaala_server.domain.environment import STATUS_LINES, Facts, GitState
from openvaala_server.domain.instructions import Doc, Memory
from openvaala_server.domain.memory import Scope

GIT_TIMEOUT_S = 5.0
FILE_MAX_CHARS = 1_000_000  # read of one instruction file; the cap applies after
MEMORY_FILE = "MEMORY.md"
PROJECT_MEMORY_DIR = ".openvaala"


@dataclass(frozen=True)
class Surroundings:
    facts: Facts
    user_doc: Doc | None
    project_docs: tuple[Doc, ...]  # from the repository root down to the cwd
    memories: tuple[Memory, ...]  # the user's, then the project's (those that exist)

    @property
    def root(self) -> str:
        """The project's root: the git repository's, else the working directory."""
        return self.facts.git.root if self.facts.git is not None else self.facts.cwd


def _git(cwd: str, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", cwd, *args],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT_S,
            # Never take the index lock the user's own git commands need.
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def git_state(cwd: str) -> GitState | None:
    root = _git(cwd, "rev-parse", "--show-toplevel")
    if not root:
        return None
    status = (_git(cwd, "status", "--porcelain=v1", "--branch") or "").splitlines()
    head = status[0].removeprefix("## ") if status and status[0].startswith("## ") else ""
    changes = status[1:] if head else status
    if head.startswith("HEAD (no branch)"):
        short = (_git(cwd, "rev-parse", "--short", "HEAD") or "").strip()
        branch = f"detached at {short}" if short else "detached HEAD"
    else:
        branch = head.removeprefix("No commits yet on ").split("...")[0] or "unknown"
    return GitState(
        root=root.strip(),
        branch=branch,
        status=tuple(changes[:STATUS_LINES]),
        more=max(0, len(changes) - STATUS_LINES),
    )


def facts(cwd: str) -> Facts:
    now = datetime.now().astimezone()
    return Facts(
        system=f"{platform.system()} {platform.release()} ({platform.machine()})",
        shell="bash (the shell tool runs commands with bash -c)",
        date=now.strftime("%Y-%m-%d (%A)"),
        cwd=cwd,
        git=git_state(cwd),
    )


def _read(path: Path) -> str | None:
    """A regular file's text (links followed). A FIFO, a device or a socket is none: a tool can
    make `AGENTS.md` a FIFO, whose open and read would hold every later turn (opened
    non-blocking, so even the open cannot wait for a writer)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        with os.fdopen(fd, encoding="utf-8", errors="replace", closefd=False) as file:
            return file.read(FILE_MAX_CHARS)
    except OSError:
        return None
    finally:
        os.close(fd)


def _first_doc(directory: Path, names: Sequence[str]) -> Doc | None:
    for name in names:
        text = _read(directory / name)
        if text is not None:
            return Doc(str(directory / name), text)
    return None


def directories(root: str, cwd: str) -> list[Path]:
    """From `root` down to `cwd`; only `cwd` when it is not inside `root`."""
    top, here = Path(root), Path(cwd)
    if here != top and top not in here.parents:
        here = here.resolve()  # git names the root with symlinks resolved
        if here != top and top not in here.parents:
            return [Path(cwd)]
    chain = [here, *here.parents]
    return list(reversed(chain[: chain.index(top) + 1]))


def config_dir(config: Config) -> Path:
    """The directory of the configuration file in use: where the user's own files are."""
    return (config.path or config_path()).parent


def project_root(cwd: str) -> str:
    """The git repository's root around `cwd`, else `cwd` (blocking)."""
    root = _git(cwd, "rev-parse", "--show-toplevel")
    return root.strip() if root and root.strip() else cwd


def memory_path(scope: Scope, root: str, config_dir: Path) -> Path:
    if scope == "user":
        return config_dir / MEMORY_FILE
    return Path(root) / PROJECT_MEMORY_DIR / MEMORY_FILE


def gather(cwd: str, names: Sequence[str], config_dir: Path) -> Surroundings:
    """Everything the next request states about where it runs (blocking: a worker thread)."""
    found = facts(cwd)
    root = found.git.root if found.git is not None else cwd
    docs = [d for d in (_first_doc(d, names) for d in directories(root, cwd)) if d is not None]
    user_doc = _first_doc(config_dir, names)
    if user_doc is not None and any(d.path == user_doc.path for d in docs):
        user_doc = None  # the configuration directory is inside the project: said once
    memories = []
    scopes: tuple[Scope, ...] = ("user", "project")
    for scope in scopes:
        path = memory_path(scope, root, config_dir)
        text = _read(path)
        if text is not None:
            memories.append(Memory(scope, str(path), text))
    return Surroundings(
        facts=found,
        user_doc=user_doc,
        project_docs=tuple(docs),
        memories=tuple(memories),
    )
