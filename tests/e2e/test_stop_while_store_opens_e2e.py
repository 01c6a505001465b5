"""A stop (Ctrl+C, `serve stop`) that comes while the daemon opens its store ends the start
cleanly: exit 0, no traceback, the lock and the token gone (docs/design.md, "A stop during the
shielded steps of the build"). The store's open is shielded (a stop waits for it), so the stop
is acted on once it is done.

The open is held at a real file: `metadata.db.closed` is made a FIFO, which the start reads
(store/closed_mark.py) and which blocks until the test opens it for writing. The test lets it go
once the daemon has stopped serving (uvicorn closes an idle keep-alive connection then), which is
nearly always before its server has ended; when the machine is slow enough to reverse that, the
build gets to ready first and the stop is an ordinary one, as clean."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from openvaala_server.store import closed_mark
from openvaala_server.store.lock import is_locked, read_lock
from tests.support.daemon import Daemon

WAIT_S = 60.0  # generous: the machine may be loaded; nothing here is timed


def _address(d: Daemon, process: subprocess.Popen[bytes]) -> str:
    """The address in the daemon's lock, once it serves (its build then runs)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, "the daemon exited at start"
        info = read_lock(d.data_dir.lock_path) if is_locked(d.data_dir.lock_path) else None
        if info is not None and info.address and d.data_dir.token_path.exists():
            return info.address
        time.sleep(0.02)
    raise AssertionError("the daemon did not serve")


def _serve(d: Daemon, log_path: Path) -> subprocess.Popen[bytes]:
    """`openvaala serve` on `d`, not waited for: its start is held."""
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "openvaala_server", "serve", "--port", "0"],
            env=d.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )


def _release(fifo: str) -> None:
    """Open the FIFO for writing once the daemon reads it, and close it: it reads nothing."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            return
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        time.sleep(0.02)
    raise AssertionError("the daemon never read the held file")


async def test_a_stop_while_the_store_opens_ends_the_start_cleanly(
    daemon_factory: Callable[..., Daemon],
) -> None:
    d = daemon_factory(start=False)
    d.home.mkdir(mode=0o700)
    fifo = closed_mark.mark_path(d.data_dir.metadata_db)
    os.mkfifo(fifo, 0o600)
    log_path = d.home.parent / "held-start.log"
    process = _serve(d, log_path)
    writer: asyncio.StreamWriter | None = None
    try:
        address = await asyncio.to_thread(_address, d, process)
        host, port = address.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(f"GET /healthz HTTP/1.1\r\nHost: {address}\r\n\r\n".encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT_S)
        assert head.startswith(b"HTTP/1.1 200"), head
        process.send_signal(signal.SIGTERM)
        # The kept-alive connection is closed once the daemon has stopped serving.
        while await asyncio.wait_for(reader.read(65536), WAIT_S):
            pass
        await asyncio.to_thread(_release, str(fifo))
        code = await asyncio.to_thread(process.wait, WAIT_S)
    finally:
        if writer is not None:
            writer.close()
        if process.poll() is None:
            process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(WAIT_S)
    said = log_path.read_text(errors="replace")
    assert code == 0, said
    assert "Traceback" not in said
    assert not is_locked(d.data_dir.lock_path) and not d.data_dir.token_path.exists()
