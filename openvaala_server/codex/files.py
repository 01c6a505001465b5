"""The one file read of the Codex bridge's fold: the text a pending `apply_patch` changes, to show
its diff in the approval (proposed.py; docs/codex.md "Approvals")."""

from __future__ import annotations

import os
import stat
from typing import Final

MAX_BYTES: Final = 512 * 1024  # a larger file is not shown as a diff of its own lines


def read_text(path: str) -> str | None:
    """A regular file's UTF-8 text; None for anything else (missing, too large, binary, a FIFO
    or a device: opened without blocking and never read, so nothing waits on it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        data = f.read(MAX_BYTES + 1)
    try:
        return data.decode() if len(data) <= MAX_BYTES else None
    except UnicodeDecodeError:
        return None
