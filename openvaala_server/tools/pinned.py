"""What was approved is what is written (docs/security.md, "Approvals").

When the user allowed a call, the paths the prompt showed were resolved once, at ask time
(`Confinement.approved`). A write then goes there or nowhere: the path must still resolve to an
approved one, and its directory is opened from `/` one component at a time with `O_NOFOLLOW`
(each `openat` from the previous directory's descriptor), so a symlink swapped into the path
after the approval — by a concurrent command, say — fails the call instead of redirecting it.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path


class NotApproved(Exception):
    """The write would not reach the path the user approved; the message says so."""


def check_approved(path: Path, target: Path, approved: tuple[Path, ...]) -> None:
    """`target` (what `path` resolves to now) must be one of the approved paths."""
    if target not in approved:
        shown = ", ".join(str(p) for p in approved) or "no file"
        raise NotApproved(
            f"{path} now leads to {target}, not to what you approved ({shown}): it changed "
            "after the approval. Nothing was written."
        )


def open_dir(directory: Path, *, create: bool = True) -> int:
    """A descriptor of `directory` (an absolute real path), reached without following any
    symlink; missing components are created (0o777 less the umask) when `create`."""
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        reached = Path("/")
        for name in directory.parts[1:]:
            reached = reached / name
            child = _step(fd, name, reached, create)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _step(parent: int, name: str, reached: Path, create: bool) -> int:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        try:
            child = os.open(name, flags, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise
            os.mkdir(name, dir_fd=parent)
            child = os.open(name, flags, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise NotApproved(
                f"{reached} is no longer the directory you approved (a symlink or a file is in "
                "its place now). Nothing was written."
            ) from None
        raise
    return child
