"""A request that also produces an event on the calling connection is answered at once.

Before the listening socket was made as TCP, asyncio never set TCP_NODELAY on accepted
connections: a reply written right after an event on the same connection waited for the client's
delayed ACK, so every action of a subscribed client (TUI, web, editor) took ~40 ms instead of ~1.
The time itself is measured by `bench/request_latency.py` (a ratio near 1), not asserted here: a
timed assertion fails on a loaded machine for no fault of the daemon.
"""

from __future__ import annotations

import asyncio
import socket

from openvaala_server.server import bind_loopback


async def test_accepted_connections_have_tcp_nodelay() -> None:
    seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(on_connect, sock=bind_loopback(0))
    port = server.sockets[0].getsockname()[1]
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        assert await asyncio.wait_for(seen, 5) != 0
        writer.close()
        await writer.wait_closed()
    finally:
        server.close()
        await server.wait_closed()
