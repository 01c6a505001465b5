"""Connections that never send a request cannot deny service: they are closed after a few
seconds, the waiting ones are limited, and running out of file descriptors makes the daemon
back off and say so once, not flood its log. Raw sockets against the real daemon."""

from __future__ import annotations

import asyncio
import resource
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from tests.support.daemon import Daemon


@contextmanager
def half_open(daemon: Daemon, count: int) -> Iterator[list[socket.socket]]:
    """`count` connections that each sent half a request line and then nothing."""
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", daemon.port), timeout=30)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: ")
            socks.append(sock)
        yield socks
    finally:
        for sock in socks:
            sock.close()


def closed_by_server(sock: socket.socket, timeout: float) -> bool:
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


async def healthy(daemon: Daemon) -> bool:
    async with httpx.AsyncClient() as http:
        reply = await http.get(f"http://{daemon.address}/healthz", timeout=30)
    return reply.status_code == 200


async def test_half_open_requests_are_closed_and_limited(daemon: Daemon) -> None:
    with half_open(daemon, 300) as socks:
        # Only so many may wait for their headers: the oldest were closed for the newest.
        assert closed_by_server(socks[0], timeout=3)
        # A real client still gets in, and talks over the websocket.
        assert await healthy(daemon)
        client = await daemon.client()
        assert "conversations" in await client.request("conversation/list")
        await client.close()
        # The rest do not wait forever.
        assert all(closed_by_server(sock, timeout=20) for sock in socks)


async def test_out_of_file_descriptors_backs_off_and_logs_once(daemon: Daemon) -> None:
    assert daemon.process is not None
    resource.prlimit(daemon.process.pid, resource.RLIMIT_NOFILE, (128, 128))
    before = len(daemon.log())
    # More than the limit allows, fewer than it plus the listen backlog (so each connects).
    with half_open(daemon, 200):
        await asyncio.sleep(3)  # the accept loop meets the limit again and again meanwhile
        assert await healthy(daemon)
    grown = daemon.log()[before:]
    assert "Traceback" not in grown
    assert grown.count("cannot accept connections") == 1, grown[:2000]
    assert len(grown) < 5000
