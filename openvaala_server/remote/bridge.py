"""`openvaala bridge`: stdio ↔ the local daemon, for a client on another machine (docs/remote.md).

Run by the client as `ssh host openvaala bridge`. It starts the daemon here if none runs, writes
one JSON line (the banner: the daemon's address, the user's home, the daemon's pid; nothing
secret), then forwards the client's request head with this machine's token added (`head.py`) and
relays bytes both ways until either side closes. The token is read from this machine's data
directory and goes only to the daemon over loopback.

Blocking reads in two threads: the relay holds no state, and a thread per direction is the
shortest path for each chunk (docs/remote.md, "Latency")."""

from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path

from openvaala_server.client.daemon import ensure_server
from openvaala_server.client.remote import BannerWire
from openvaala_server.discovery import LOCK_FILE, data_root, read_lock
from openvaala_server.protocol import codec
from openvaala_server.remote import head

CHUNK = 256 * 1024


def run() -> int:
    try:
        address, token = ensure_server()
        host, _, port = address.rpartition(":")
        daemon = socket.create_connection((host, int(port)), timeout=10)
    except (RuntimeError, OSError, ValueError) as exc:
        print(f"openvaala bridge: cannot reach the daemon: {exc}", file=sys.stderr)
        return 1
    daemon.settimeout(None)
    daemon.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    _write_all(1, codec.dumps(_banner(address)) + b"\n")
    try:
        first = _read_head(0)
        daemon.sendall(head.rewrite(first[0], address, token) + first[1])
    except (head.BadHead, OSError, EOFError) as exc:
        print(f"openvaala bridge: {exc}", file=sys.stderr)
        return 1
    threading.Thread(target=_upstream, args=(daemon,), daemon=True).start()
    _downstream(daemon)
    return 0


def _banner(address: str) -> BannerWire:
    info = read_lock(data_root() / LOCK_FILE)
    pid = info.pid if info is not None and info.pid else 0
    return {"bridge": 1, "address": address, "home": str(Path.home()), "pid": pid}


def _read_head(fd: int) -> tuple[bytes, bytes]:
    buffer = b""
    while (found := head.split(buffer)) is None:
        chunk = os.read(fd, CHUNK)
        if not chunk:
            raise EOFError("the client closed before its request")
        buffer += chunk
    return found


def _upstream(daemon: socket.socket) -> None:
    """Client → daemon; the client's end of stream half-closes the daemon's socket."""
    try:
        while chunk := os.read(0, CHUNK):
            daemon.sendall(chunk)
        daemon.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _downstream(daemon: socket.socket) -> None:
    """Daemon → client, until the daemon closes (then the bridge ends, and with it ssh)."""
    try:
        while chunk := daemon.recv(CHUNK):
            _write_all(1, chunk)
    except OSError:
        pass
    finally:
        daemon.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
