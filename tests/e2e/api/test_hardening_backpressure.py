"""Back-pressure instead of drops: a client that sends many requests without waiting is slowed to
the pace it reads its answers, and a client that stops reading gets a close frame (1013) after
the frames it had not read, not a bare end of stream."""

from __future__ import annotations

import asyncio
import contextlib
import socket

import orjson
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.support.daemon import DEFAULT_CONFIG, Daemon
from tests.support.events import new_conversation, run_turn

SMALL_QUEUE = DEFAULT_CONFIG + "\n[server]\nclient_queue_limit = 10\n"


async def _raw(daemon: Daemon, **options: object) -> ClientConnection:
    ws = await connect(
        f"ws://{daemon.address}/ws",
        additional_headers={"Authorization": f"Bearer {daemon.token}"},
        max_size=None,
        **options,  # type: ignore[arg-type]
    )
    await ws.send('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}')
    assert orjson.loads(await ws.recv())["id"] == 0
    return ws


async def test_many_requests_without_waiting_are_all_answered(daemon_factory) -> None:  # type: ignore[no-untyped-def]
    daemon: Daemon = daemon_factory(SMALL_QUEUE)
    ws = await _raw(daemon)
    count = 2000

    # All written at once, so the server finds them waiting together.
    for n in range(1, count + 1):
        ws.protocol.send_text(f'{{"jsonrpc":"2.0","id":{n},"method":"initialize"}}'.encode())
    ws.transport.write(b"".join(ws.protocol.data_to_send()))
    answered: set[int] = set()
    while len(answered) < count:
        reply = orjson.loads(await asyncio.wait_for(ws.recv(), 30))
        assert "result" in reply, reply
        answered.add(reply["id"])
    assert answered == set(range(1, count + 1))
    await ws.close()


async def test_a_client_that_stops_reading_gets_a_close_frame(daemon_factory) -> None:  # type: ignore[no-untyped-def]
    daemon: Daemon = daemon_factory(DEFAULT_CONFIG + "\n[server]\nclient_queue_limit = 200\n")
    writer = await daemon.client()
    cid = await new_conversation(writer, str(daemon.workdir))

    # A reader with a small receive buffer that reads nothing more after subscribing.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", daemon.port))
    reader = await _raw(daemon, sock=sock, max_queue=1)
    await reader.send(
        orjson.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "conversation/subscribe",
                "params": {"conversationId": cid},
            }
        ).decode()
    )

    big = "many words " * 15_000
    for _ in range(100):
        await run_turn(writer, cid, big)
        if "dropping a client" in daemon.log():
            break
    assert "dropping a client" in daemon.log()
    await asyncio.sleep(3)  # a while later (the server gave up waiting for room after 2 s)

    # Reading again, it finds the frames it had not read, then the reason it was dropped.
    frames = 0
    with contextlib.suppress(ConnectionClosed):
        while True:
            await asyncio.wait_for(reader.recv(), 30)
            frames += 1
    assert frames > 200  # more than its queue held: the socket was full, the queue too
    assert reader.close_code == 1013
    await writer.close()
