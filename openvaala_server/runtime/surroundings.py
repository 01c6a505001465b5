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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from openvaala_server.config import Config, config_path
from openvaala_server.domain.environment import STATUS_LINES, Facts, GitState
from openvaala_server.domain.instructions import Doc, Memory
from openvaala_server.domain.memory import Scope
from openvaala_server.tools import confined_git

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


def _git(cwd: str, *args: str, protected: Sequence[Path] = ()) -> str | None:
    """git's output, run confined (tools/confined_git.py): the repository is the agent's."""
    return confined_git.run(cwd, args, protected)


def git_state(cwd: str, protected: Sequence[Path] = ()) -> GitState | None:
    try:
        return _git_state(cwd, protected)
    except confined_git.Unconfined:
        # No sandbox for git here: the branch only, read from HEAD without running git.
        root = confined_git.find_root(cwd)
        if root is None:
            return None
        return GitState(root=str(root), branch=confined_git.git_head(root), status=(), more=0)


def _git_state(cwd: str, protected: Sequence[Path]) -> GitState | None:
    root = _git(cwd, "rev-parse", "--show-toplevel", protected=protected)
    if not root:
        return None
    status_args = ("status", "--porcelain=v1", "--branch", "--ignore-submodules=all")
    status = (_git(cwd, *status_args, protected=protected) or "").splitlines()
    head = status[0].removeprefix("## ") if status and status[0].startswith("## ") else ""
    changes = status[1:] if head else status
    if head.startswith("HEAD (no branch)"):
        short = (_git(cwd, "rev-parse", "--short", "HEAD", protected=protected) or "").strip()
        branch = f"detached at {short}" if short else "detached HEAD"
    else:
        branch = head.removeprefix("No commits yet on ").split("...")[0] or "unknown"
    return GitState(
        root=root.strip(),
        branch=branch,
        status=tuple(changes[:STATUS_LINES]),
        more=max(0, len(changes) - STATUS_LINES),
    )


def facts(cwd: str, protected: Sequence[Path] = ()) -> Facts:
    now = datetime.now().astimezone()
    return Facts(
        system=f"{platform.system()} {platform.release()} ({platform.machine()})",
        shell="bash (the shell tool runs commands with bash -c)",
        date=now.strftime("%Y-%m-%d (%A)"),
        cwd=cwd,
        git=git_state(cwd, protected),
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


def private_paths(config: Config, data_root: Path) -> tuple[Path, ...]:
    """The daemon's paths the git it runs must not see: its data directory and config file."""
    return (data_root, config.path or config_path())


def project_root(cwd: str) -> str:
    """The git repository's root around `cwd`, else `cwd` (blocking)."""
    try:
        root = _git(cwd, "rev-parse", "--show-toplevel")
    except confined_git.Unconfined:
        found = confined_git.find_root(cwd)
        return str(found) if found is not None else cwd
    return root.strip() if root and root.strip() else cwd


def memory_path(scope: Scope, root: str, config_dir: Path) -> Path:
    if scope == "user":
        return config_dir / MEMORY_FILE
    return Path(root) / PROJECT_MEMORY_DIR / MEMORY_FILE


def gather(
    cwd: str, names: Sequence[str], config_dir: Path, protected: Sequence[Path] = ()
) -> Surroundings:
    """Everything the next request states about where it runs (blocking: a worker thread).
    `protected`: the daemon's private paths, hidden from the git it runs."""
    found = facts(cwd, protected)
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
