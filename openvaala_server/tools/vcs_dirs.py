"""The version-control directories a `workspace` call must not write (docs/security.md).

Those of the working directory, and of the repositories below it found by a bounded walk
(`DEPTH` levels, at most `WALK_MAX` directories looked into, at most `BIND_MAX` found): each is
bound read-only, and each costs bubblewrap a mount. A `.git` file (`gitdir: …`, as
`--separate-git-dir`, worktrees and submodules write) leads to the real gitdir, and its
`commondir` to the shared one; those are bound too when they lie inside the working directory
(outside it, everything is read-only anyway).

A version-control entry that is a symbolic link cannot be pinned: a mount follows the link, and
the link itself could be replaced by a directory of the agent's making. So the directory holding
a nested one is bound read-only as a whole, and a `workspace` call in a working directory whose
own entry is a link is refused (`own_links`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from openvaala_server.domain.permissions import VCS_DIRS

# Levels below the working directory looked into: `cwd/a/b/.git` is found, `cwd/a/b/c/.git` not.
DEPTH: Final = 2
# Directories looked into at most (a home directory holds many): the walk stops there.
WALK_MAX: Final = 1000
# Version-control directories bound at most (each mount costs bubblewrap 1-3 ms).
BIND_MAX: Final = 8
# Never walked into: they hold no repository of the project, and can be huge.
_SKIPPED: Final = frozenset({"node_modules", "__pycache__", ".venv", "venv", ".tox", ".cache"})
# The kernel's directories, for a working directory of `/`: the sandbox has its own.
_SYSTEM: Final = frozenset({"/proc", "/sys", "/dev"})


@dataclass
class Found:
    read_only: list[str] = field(default_factory=list)  # real paths, outermost first
    symlinked: list[str] = field(default_factory=list)  # version-control entries that are links


def own_links(cwd: str) -> list[str]:
    """The version-control entries of `cwd` itself that are symbolic links."""
    return [p for p in (os.path.join(cwd, n) for n in sorted(VCS_DIRS)) if os.path.islink(p)]


def _entries(cwd: str) -> list[str]:
    """The version-control entries of `cwd` and of the directories below it, within the bounds."""
    found: list[str] = []
    level = [cwd]
    looked = 0
    for depth in range(DEPTH + 1):
        below: list[str] = []
        for folder in level:
            looked += 1
            if looked > WALK_MAX:
                return found
            try:
                with os.scandir(folder) as scan:
                    entries = list(scan)
            except OSError:
                continue
            for entry in entries:
                if entry.name in VCS_DIRS:
                    found.append(entry.path)
                elif depth < DEPTH and _walked_into(entry):
                    below.append(entry.path)
        level = sorted(below)
    return found


def _walked_into(entry: os.DirEntry[str]) -> bool:
    if entry.name in _SKIPPED or entry.path in _SYSTEM:
        return False
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _gitdirs(dot_git: str) -> list[str]:
    """What a `.git` file leads to: its gitdir, and that one's common directory."""
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as file:
            line = file.read(4096).strip()
    except OSError:
        return []
    if not line.startswith("gitdir:"):
        return []
    gitdir = os.path.join(os.path.dirname(dot_git), line.removeprefix("gitdir:").strip())
    found = [gitdir]
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8", errors="replace") as file:
            found.append(os.path.join(gitdir, file.read(4096).strip()))
    except OSError:
        pass
    return found


def repository_dirs(cwd: str) -> Found:
    """What `workspace` keeps read-only in `cwd` (a real path)."""
    result = Found()
    chosen: set[str] = set()
    for path in _entries(cwd):
        targets = [path]
        if os.path.islink(path):
            result.symlinked.append(path)
            # The link cannot be pinned, the directory holding it can: a nested repository
            # with a linked `.git` is read-only as a whole (the working directory's own is
            # refused instead: sandbox.working_dir_problem).
            if os.path.dirname(path) != cwd:
                targets.append(os.path.dirname(path))
        if os.path.isfile(path):
            targets += _gitdirs(path)
        for target in targets:
            real = os.path.realpath(target)
            if Path(real).is_relative_to(cwd) and os.path.exists(real):
                chosen.add(real)
    ordered = sorted(chosen, key=lambda p: (len(Path(p).parts), p))
    result.read_only = ordered[:BIND_MAX]
    return result
