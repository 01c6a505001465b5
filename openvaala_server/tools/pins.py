"""Mounts that keep what a sandboxed command may not touch where it is (docs/security.md).

Hiding a directory with a mount is not enough: the directory *holding* a mount point can still be
renamed, and a renamed `~/.config` takes the real configuration along, out from under the mount
(attack 1 of docs/security.md, "Attacks and what stops them"). A mount point itself cannot be
renamed, replaced or removed (EBUSY), so every ancestor of a protected path that lies inside the
writable area is bound onto itself: still writable, but pinned in place.

The version-control directories (`.git`, `.hg`, `.svn`, `.jj`) in the working directory are bound
read-only in `workspace`: a hook or a `core.fsmonitor` planted there would run unconfined at the
user's next `git status` (which ones: tools/vcs_dirs.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from openvaala_server.tools import vcs_dirs


def pinned_ancestors(protected: Iterable[str], writable: str) -> list[str]:
    """The existing directories strictly inside `writable` that lead to a protected path,
    outermost first (so a later bind never covers an earlier one)."""
    root = Path(writable)
    found: set[Path] = set()
    for path in protected:
        for parent in Path(path).parents:
            if parent != root and parent.is_relative_to(root) and parent.is_dir():
                found.add(parent)
    return [str(path) for path in sorted(found, key=lambda p: (len(p.parts), p))]


def pin_args(protected: Iterable[str], writable: str) -> list[str]:
    """`--bind A A` for every ancestor `pinned_ancestors` names."""
    args: list[str] = []
    for path in pinned_ancestors(protected, writable):
        args += ["--bind", path, path]
    return args


def read_only_repository_args(cwd: str) -> list[str]:
    """`--ro-bind D D` for every version-control directory `vcs_dirs` finds in `cwd`."""
    args: list[str] = []
    for path in vcs_dirs.repository_dirs(cwd).read_only:
        args += ["--ro-bind", path, path]
    return args
