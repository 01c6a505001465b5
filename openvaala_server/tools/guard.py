"""Where the file tools may read and write under a call's confinement, and opening files safely.

Every check is made on the real path (symlinks resolved), so a link in the workspace that points
outside it is judged by where it leads. The daemon's protected paths (its data directory, with the
token that grants the whole API, and its configuration) are out of reach in every mode. Only
regular files are opened: a FIFO would block the reading thread until some writer came, a device
may never end, so both are refused after a `stat` and before any `open`, and the open itself is
non-blocking in case the path changed in between (docs/security.md).
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import replace
from pathlib import Path

from openvaala_server.domain.permissions import Confinement, repository_part
from openvaala_server.tools import pinned


class Refused(Exception):
    """The confinement forbids this path; the message says why, for the model to read."""


def real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _protecting(path: Path, confinement: Confinement) -> Path | None:
    for protected in confinement.protected:
        if path.is_relative_to(real(protected)):
            return protected
    return None


def check_read(path: Path, confinement: Confinement) -> Path:
    """The real path of `path`, if the call may read it."""
    target = real(path)
    if (protected := _protecting(target, confinement)) is not None:
        raise Refused(
            f"{path} is inside {protected}, which the daemon keeps private (its data or "
            "configuration); no tool may read it."
        )
    return target


def check_write(path: Path, cwd: Path, confinement: Confinement) -> Path:
    """The real path of `path`, if the call may create, change or delete it (and, for a call the
    user approved, if it is still the path the prompt showed)."""
    target = real(path)
    if confinement.approved is not None:
        try:
            pinned.check_approved(path, target, confinement.approved)
        except pinned.NotApproved as exc:
            raise Refused(str(exc)) from None
    if (protected := _protecting(target, confinement)) is not None:
        raise Refused(
            f"{path} is inside {protected}, which the daemon keeps private (its data or "
            "configuration); no tool may write it."
        )
    if confinement.mode == "read-only":
        raise Refused(
            f"Writing {path} is blocked by the sandbox: read-only (this agent may not change "
            "files)."
        )
    if confinement.mode == "workspace" and not target.is_relative_to(real(cwd)):
        shown = f"{path} (really {target})" if target != Path(os.path.abspath(path)) else path
        raise Refused(
            f"Writing {shown} is blocked by the sandbox: workspace (writes only inside the "
            f"working directory {cwd})."
        )
    if confinement.mode == "workspace" and (vcs := repository_part(target, real(cwd))):
        raise Refused(
            f"Writing {path} is blocked by the sandbox: workspace keeps {vcs} read-only (a hook "
            f"or config planted there would run outside the sandbox at the next {vcs} command)."
        )
    return target


def _kind(mode: int) -> str | None:
    """What a non-regular, non-directory file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    kinds = {
        stat.S_ISFIFO: "a FIFO (named pipe)",
        stat.S_ISSOCK: "a socket",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISDIR: "a directory",
    }
    return next((name for test, name in kinds.items() if test(mode)), "not a regular file")


def refuse_special(path: Path, mode: int) -> None:
    """Refuse anything but a regular file (directories get their own message from the caller)."""
    if (kind := _kind(mode)) is not None:
        raise Refused(
            f"{path} is {kind}, not a regular file; the file tools work only on regular files."
        )


def open_for_reading(path: Path, confinement: Confinement) -> int:
    """A file descriptor for the regular file at `path` (real path), checked once opened too."""
    refuse_special(path, os.stat(path).st_mode)
    # O_NONBLOCK: should the path have become a FIFO since the stat, open returns at once.
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags)
    try:
        refuse_special(path, os.fstat(fd).st_mode)
        # What was opened, wherever a rename in between may have moved it.
        opened = _fd_path(fd)
        if opened is not None:
            check_read(opened, confinement)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def checked_dir(path: Path, cwd: Path, confinement: Confinement) -> int:
    """An open directory where a file may be written, checked again once opened; for a call the
    user approved, reached from `/` without following any link (tools/pinned.py)."""
    if confinement.approved is not None:
        try:
            fd = pinned.open_dir(path)
        except pinned.NotApproved as exc:
            raise Refused(str(exc)) from None
    else:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        opened = _fd_path(fd)
        if opened is not None:  # the directory itself is not one of the approved files
            check_write(opened, cwd, replace(confinement, approved=None))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _fd_path(fd: int) -> Path | None:
    # Linux names an open file's current path here; elsewhere the earlier check has to do.
    with contextlib.suppress(OSError):
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    return None
