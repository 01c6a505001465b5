"""Frames that pile up for a client go out with few socket writes, all of them, in order
(docs/design.md, "Performance at scale"; api/connection.py, api/websocket.py SEND_MANY).

In-process, with the daemon's real parts: uvicorn serving a websocket with the daemon's protocol
(`ClosingWebSocketProtocol`, here counting its transport's writes) and a `Connection` whose
dispatcher answers one request by delivering a burst of 1,000 notifications at once — what a
hub does when events pile up while the loop is busy. A real websocket client reads them."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket
from websockets.asyncio.client import connect

from openvaala_server.api.connection import Connection
from openvaala_server.api.websocket import ClosingWebSocketProtocol
from openvaala_server.protocol import jsonrpc

BURST = 1_000


class CountingProtocol(ClosingWebSocketProtocol):
    writes = 0

    def connection_made(self, transport: Any) -> None:
        write = transport.write

        def counted(data: bytes) -> None:
            CountingProtocol.writes += 1
            write(data)

        transport.write = counted
        super().connection_made(transport)


class Burst:
    """A dispatcher: any request delivers BURST notifications to its connection at once."""

    async def dispatch(self, conn: Connection, method: str, raw: dict[str, Any]) -> Any:
        for n in range(BURST):
            conn.deliver(jsonrpc.notification("item/delta", {"n": n}).decode())
        CountingProtocol.writes = 0  # count from here: the answer and the burst
        return {"sent": BURST}


@pytest.fixture
async def address() -> AsyncIterator[str]:
    async def endpoint(websocket: WebSocket) -> None:
        await Connection(websocket, Burst(), 10_000).serve()

    app = Starlette(routes=[WebSocketRoute("/ws", endpoint)])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    # Listening now: the kernel queues a client's connection until uvicorn accepts it, so the
    # test needs no wait for the server to have started.
    sock.listen()
    config = uvicorn.Config(
        app, ws=CountingProtocol, lifespan="off", log_level="warning", ws_per_message_deflate=False
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    yield f"127.0.0.1:{sock.getsockname()[1]}"
    server.should_exit = True
    await task


async def test_a_burst_of_frames_is_sent_whole_in_order_with_few_writes(address: str) -> None:
    async with connect(f"ws://{address}/ws") as ws:
        await ws.send(orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "go"}).decode())
        got = [orjson.loads(await ws.recv()) for _ in range(BURST + 1)]
    assert [m["params"]["n"] for m in got[:BURST]] == list(range(BURST))
    assert got[-1] == {"jsonrpc": "2.0", "id": 1, "result": {"sent": BURST}}
    # One write per frame without batching; a few batches of up to 256 with it.
    assert CountingProtocol.writes <= 10, CountingProtocol.writes
