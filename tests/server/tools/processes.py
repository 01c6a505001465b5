"""Find a test's processes from outside any PID namespace: by a marker in their command line.

A command in a sandbox sees its own PID numbers (`$$` is 2 in there), so tests cannot check the
pids it reports; they give its processes a marker (`sleep 100.123456`) and look for it in /proc.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def is_alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting for init to reap it."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # gone between the two looks (ENOENT or ESRCH)
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def processes_with(marker: str, program: str | None = None) -> list[int]:
    """Live processes whose command line holds `marker` (and that run `program`, if given)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = Path(entry.path, "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not any(marker.encode() in arg for arg in argv):
            continue
        if program is not None and os.path.basename(argv[0]).decode() != program:
            continue
        if is_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def survivors(marker: str, within: float = 15.0) -> list[int]:
    """The marked processes still alive after up to `within` seconds (dying takes a moment, and
    longer on a loaded machine; the wait ends as soon as none is left).

    Polls synchronously: nothing else needs the event loop meanwhile.
    """
    deadline = time.monotonic() + within
    while (alive := processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return alive


def wait_for_processes(marker: str, program: str, count: int, within: float = 15.0) -> list[int]:
    """The marked processes running `program`, once there are `count` (or `within` is up)."""
    deadline = time.monotonic() + within
    while len(found := processes_with(marker, program)) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return found
