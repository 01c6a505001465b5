"""Finding the local daemon, and starting one when none runs (`openvaala serve start`).

A data directory is named by its root path or by anything with a `root` (the store's `DataDir`
is one); None means the default place (`discovery.data_root`)."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Protocol

from openvaala_server import discovery
from openvaala_server.start_dir import daemon_command


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
    found = discovery.find_server(root_of(data_dir))
    if found is not None:
        _reap_early_start()
    return found


# A `serve start` begun by `start_server_early`, which `ensure_server` waits for.
_early_start: subprocess.Popen[str] | None = None


def _serve_start() -> subprocess.Popen[str]:
    return subprocess.Popen(
        daemon_command("serve", "start"),
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


def _reap_early_start() -> None:
    """A server answers: the early start has done its work (or found one running). It is
    waited for in a thread, so that it does not stay a zombie with two open pipes for the life
    of the terminal UI, and the UI does not wait for its health check to end."""
    global _early_start
    starting, _early_start = _early_start, None
    if starting is not None:
        threading.Thread(
            target=starting.communicate, name="openvaala-early-start", daemon=True
        ).start()


def server_starting(data_dir: DataDirLike | None = None) -> bool:
    """Whether a daemon holds this data directory's lock but serves no address yet: it is
    starting, and a client waits for it rather than lose the lock race to it. A free lock (the
    daemon crashed or stopped) means nobody is coming: a client may start one at once."""
    info = discovery.read_lock(root_of(data_dir) / discovery.LOCK_FILE)
    return info is not None and not info.address


def ensure_server(data_dir: DataDirLike | None = None) -> tuple[str, str]:
    """Find the server, starting one with `openvaala serve start` if none runs."""
    global _early_start
    found = find_server(data_dir)
    if found:
        return found
    starting, _early_start = _early_start, None
    _, stderr = (starting or _serve_start()).communicate()
    found = find_server(data_dir)
    if found is None:
        raise RuntimeError(f"could not start the OpenVaala server: {stderr.strip()}")
    return found
