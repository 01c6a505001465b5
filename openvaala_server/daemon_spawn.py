"""Starting the daemon detached and waiting for its health: what `openvaala serve start` does,
and what a client (exec, the terminal UI) does itself when no daemon runs, so that only two
interpreters start in a row instead of three (docs/design.md, "Exec starts the daemon itself").

Light on purpose: a client imports this before it has a daemon to talk to, so nothing here
imports the configuration, the store or the server (the daemon validates its configuration and
says what is wrong in its log, which the failure quotes)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

from openvaala_server.discovery import LOCK_FILE, data_root, find_server, is_locked, read_lock
from openvaala_server.start_dir import daemon_command

START_TIMEOUT_S = 15.0
# Every client that starts a daemon waits in this loop: a coarse step was up to 50 ms more on
# its start (docs/design.md, "Start-up imports").
START_POLL_S = 0.01
LOG_FILE = "server.log"


class StartFailed(Exception):
    """The daemon exited at start or did not become healthy; the message says why."""


class Starting(NamedTuple):
    """A daemon spawned on `root`, whose output since its spawn is `log_path` from `log_offset`.
    A NamedTuple: see `discovery.LockInfo`."""

    process: subprocess.Popen[bytes]
    root: Path
    log_path: Path
    log_offset: int


def running_address(root: Path) -> str | None:
    """The address of the daemon holding this data directory, if one runs and serves (it may
    still be starting: what is asked of it then waits until it is ready, docs/protocol.md)."""
    lock = root / LOCK_FILE
    if not is_locked(lock):
        return None
    info = read_lock(lock)
    return info.address if info and info.address else None


def spawn(root: Path, port: int | None = None) -> Starting:
    """Start `openvaala serve` on the data directory at `root`, in its own session (it outlives
    the terminal and the client that started it), its output appended to the data directory's
    log. Raises OSError when the directory or its log cannot be made."""
    root.mkdir(mode=0o700, parents=True, exist_ok=True)  # the daemon tightens the rest
    log_path = root / LOG_FILE
    command = daemon_command("serve")
    if port is not None:
        command += ["--port", str(port)]
    env = None
    if root != data_root():  # a client named another one: the daemon must find it too
        env = dict(os.environ, OPENVAALA_HOME=str(root.absolute()))
    with open(log_path, "ab") as log_file:
        offset = log_file.tell()
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
            env=env,
            start_new_session=True,  # survives the terminal that started it
            close_fds=True,
        )
    return Starting(process, root, log_path, offset)


def wait_healthy(starting: Starting) -> str:
    """The address of the daemon `starting`, once it is ready. Raises StartFailed, quoting what
    it wrote, if it exits first or takes longer than START_TIMEOUT_S."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        code = starting.process.poll()
        if code is not None:
            raise StartFailed(
                f"the server exited at start (code {code}); see {starting.log_path}:\n"
                + _output_since(starting).rstrip()
            )
        found = find_server(starting.root)
        if found and ready(*found, timeout=deadline - time.monotonic()):
            return found[0]
        time.sleep(START_POLL_S)
    raise StartFailed(
        f"the server did not become healthy within {START_TIMEOUT_S:.0f} s; see {starting.log_path}"
    )


def ready(address: str, token: str, timeout: float = 1.0) -> bool:
    """Whether the daemon at `address` is ready, waiting up to `timeout` s for it: `GET /ready`
    answers once the runtime is built (docs/protocol.md). The daemon serves before that; waiting
    for ready keeps a start that fails while building (a store it cannot open) a failed start,
    quoted from its log, rather than a connection that drops. False when it is not serving yet
    or is stopping."""
    # The standard library's client: httpx would add its import time to every start. Imported
    # here, once the daemon is spawned: its import (email's parser) then overlaps the daemon's
    # start (docs/design.md, "A cold exec, end to end").
    import http.client

    host, _, port = address.rpartition(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=max(timeout, 0.1))
    try:
        connection.request("GET", "/ready", headers={"Authorization": f"Bearer {token}"})
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def _output_since(starting: Starting, limit: int = 64 * 1024) -> str:
    """What the daemon wrote to its log since it was spawned (its last `limit` bytes)."""
    try:
        with open(starting.log_path, "rb") as f:
            end = f.seek(0, os.SEEK_END)
            f.seek(max(starting.log_offset, end - limit))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
