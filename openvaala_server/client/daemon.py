"""Finding the local daemon, and starting one when none runs (`openvaala serve start`).

A data directory is named by its root path or by anything with a `root` (the store's `DataDir`
is one); None means the default place (`discovery.data_root`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Protocol

from openvaala_server import discovery


class HasRoot(Protocol):
    @property
    def root(self) -> Path: ...


DataDirLike = Path | HasRoot


def root_of(data_dir: DataDirLike | None) -> Path:
    if data_dir is None:
        return discovery.data_root()
    return data_dir if isinstance(data_dir, Path) else data_dir.root


def find_server(data_dir: DataDirLike | None = None) -> tuple[str, str] | None:
    """(address, token) of the server running on this data directory, if any."""
    return discovery.find_server(root_of(data_dir))


# A `serve start` begun by `start_server_early`, which `ensure_server` waits for.
_early_start: subprocess.Popen[str] | None = None


def _serve_start() -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "openvaala_server", "serve", "start"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def start_server_early(data_dir: DataDirLike | None = None) -> None:
    """Begin starting the server, if none runs, without waiting for it: the terminal UI imports
    its toolkit meanwhile (docs/design.md, "Start-up time"). `ensure_server` then waits for this
    start instead of beginning a second one."""
    global _early_start
    if _early_start is None and find_server(data_dir) is None:
        _early_start = _serve_start()


def ensure_server(data_dir: DataDirLike | None = None) -> tuple[str, str]:
    """Find the server, starting one with `openvaala serve start` if none runs."""
    global _early_start
    starting, _early_start = _early_start, None
    found = find_server(data_dir)
    if found:
        if starting is not None:
            # Reaped, not left a zombie with two open pipes for the life of the terminal UI: it
            # exits as soon as the server answers, which this one already does.
            starting.communicate()
        return found
    _, stderr = (starting or _serve_start()).communicate()
    found = find_server(data_dir)
    if found is None:
        raise RuntimeError(f"could not start the OpenVaala server: {stderr.strip()}")
    return found
