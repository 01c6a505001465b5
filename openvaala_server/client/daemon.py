"""Finding the local daemon, and starting one when none runs (as `openvaala serve start` does).

A data directory is named by its root path or by anything with a `root` (the store's `DataDir`
is one); None means the default place (`discovery.data_root`)."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Protocol

from openvaala_server import discovery
from openvaala_server.daemon_spawn import StartFailed, Starting, spawn, wait_healthy


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


# A daemon begun by `start_server_early`, which `ensure_server` waits for.
_early_start: Starting | None = None


def _spawn(data_dir: DataDirLike | None) -> Starting:
    """The daemon started from here, as `openvaala serve start` starts it: a third interpreter
    in a row (`serve start`'s own) cost every cold client its start-up (docs/design.md, "Exec
    starts the daemon itself")."""
    try:
        return spawn(root_of(data_dir))
    except OSError as exc:
        raise RuntimeError(f"could not start the OpenVaala server: {exc}") from exc


def start_server_early(data_dir: DataDirLike | None = None) -> None:
    """Begin starting the server, if none runs, without waiting for it: the terminal UI imports
    its toolkit meanwhile (docs/design.md, "Start-up time"). `ensure_server` then waits for this
    start instead of beginning a second one."""
    global _early_start
    if _early_start is None and find_server(data_dir) is None:
        # A data directory that cannot be made is said by `ensure_server`, when the terminal UI
        # connects and can show it; here it would be a traceback before the UI.
        with contextlib.suppress(RuntimeError):
            _early_start = _spawn(data_dir)


def starting_here() -> bool:
    """Whether this process began a daemon's start (`start_server_early`) not yet waited for: a
    client then waits for it to be ready (`ensure_server`), as a start that fails while building
    answers before it fails (docs/protocol.md, `/ready`)."""
    return _early_start is not None


def _reap_early_start() -> None:
    """A server answers: the early start has done its work (or lost the lock to one already
    running). The daemon is this process's child until this one exits: it is waited for in a
    thread, so that when it stops it does not stay a zombie for the life of the terminal UI."""
    global _early_start
    starting, _early_start = _early_start, None
    if starting is not None:
        _reap(starting)


def _reap(starting: Starting) -> None:
    threading.Thread(
        target=starting.process.wait, name="openvaala-daemon-reaper", daemon=True
    ).start()


def server_starting(data_dir: DataDirLike | None = None) -> bool:
    """Whether a daemon holds this data directory's lock but serves no address yet: it is
    starting, and a client waits for it rather than lose the lock race to it. A free lock (the
    daemon crashed or stopped) means nobody is coming: a client may start one at once."""
    info = discovery.read_lock(root_of(data_dir) / discovery.LOCK_FILE)
    return info is not None and not info.address


def ensure_server(data_dir: DataDirLike | None = None) -> tuple[str, str]:
    """Find the server, starting one (as `openvaala serve start` does) if none runs."""
    global _early_start
    starting, _early_start = _early_start, None
    if starting is None:
        found = find_server(data_dir)
        if found:
            return found
        starting = _spawn(data_dir)
    # The daemon this process started answers before it is ready (docs/protocol.md, `/ready`):
    # finding its address is not enough, a start that fails while building must be said as one,
    # quoted from its log, not as a refused connection.
    try:
        wait_healthy(starting)
    except StartFailed as exc:
        failure = str(exc)
    else:
        failure = ""
    _reap(starting)
    # As when `serve start` failed: a daemon that lost the lock to another which serves by now
    # is no failure.
    found = find_server(data_dir)
    if found is None:
        raise RuntimeError(f"could not start the OpenVaala server: {failure or 'no address'}")
    return found
