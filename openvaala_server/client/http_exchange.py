"""One HTTP request over a socket the caller opened: to this machine's daemon over TCP, or to a
remote one through `ssh host openvaala bridge` (docs/remote.md, "Bundles between machines").

The bridge forwards one request per ssh channel, so every exchange closes its connection. h11
does the framing (the daemon may answer with a length, chunks or up to the close)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from dataclasses import dataclass

import h11

CHUNK = 256 * 1024


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes


async def exchange(
    sock: socket.socket,
    method: str,
    target: str,
    body: bytes = b"",
    *,
    host: str,
    token: str | None,
) -> Answer:
    """Send `method target` with `body` on `sock` and read the whole answer; closes `sock`.
    No `token` through a bridge: it adds the daemon's own. `ConnectionError` when the answer is
    not HTTP or is cut short."""
    reader, writer = await asyncio.open_connection(sock=sock)
    try:
        conn = h11.Connection(our_role=h11.CLIENT)
        headers = [("Host", host), ("Content-Length", str(len(body))), ("Connection", "close")]
        if token is not None:
            headers.append(("Authorization", f"Bearer {token}"))
        writer.write(conn.send(h11.Request(method=method, target=target, headers=headers)) or b"")
        writer.write(conn.send(h11.Data(data=body)) or b"" if body else b"")
        writer.write(conn.send(h11.EndOfMessage()) or b"")
        await writer.drain()
        try:
            return await _answer(conn, reader)
        except h11.RemoteProtocolError as exc:
            raise ConnectionError(f"not an HTTP answer from the daemon: {exc}") from None
    finally:
        writer.close()
        with contextlib.suppress(OSError):  # the far end went first: nothing is left to flush
            await writer.wait_closed()


async def _answer(conn: h11.Connection, reader: asyncio.StreamReader) -> Answer:
    status = 0
    parts: list[bytes] = []
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await reader.read(CHUNK))
        elif isinstance(event, h11.Response):
            status = event.status_code
        elif isinstance(event, h11.Data):
            parts.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            if not status:
                raise ConnectionError("the daemon closed the connection without an answer")
            return Answer(status, b"".join(parts))
