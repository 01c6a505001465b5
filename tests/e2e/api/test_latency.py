"""A request that also produces an event on the calling connection is answered at once.

Before the listening socket was made as TCP, asyncio never set TCP_NODELAY on accepted
connections: a reply written right after an event on the same connection waited for the client's
delayed ACK, so every action of a subscribed client (TUI, web, editor) took ~40 ms instead of ~1.
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import time

from openvaala_server.client import Client
from openvaala_server.server import bind_loopback
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn

ROUNDS = 15


async def _rename_times(client: Client, cid: str) -> list[float]:
    times = []
    for i in range(ROUNDS):
        start = time.perf_counter()
        await client.request("conversation/rename", {"conversationId": cid, "title": f"t{i}"})
        times.append(time.perf_counter() - start)
    return times


async def test_a_subscribed_rename_is_as_quick_as_an_unsubscribed_one(daemon: Daemon) -> None:
    watcher = await daemon.client("watcher")
    cid = await new_conversation(watcher, str(daemon.workdir))
    await run_turn(watcher, cid, "hello")
    outsider = await daemon.client("outsider")
    try:
        # Interleaved so both see the same machine load.
        subscribed, unsubscribed = [], []
        for _ in range(2):
            subscribed += await _rename_times(watcher, cid)
            unsubscribed += await _rename_times(outsider, cid)
        sub, unsub = statistics.median(subscribed), statistics.median(unsubscribed)
        # Nagle + delayed ACK made the subscribed median ~70× the unsubscribed one (44 vs 0.6 ms).
        assert sub < 6 * unsub, f"subscribed {sub * 1000:.2f} ms vs {unsub * 1000:.2f} ms"
    finally:
        await watcher.close()
        await outsider.close()


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
