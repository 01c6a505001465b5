"""uvicorn's websocket protocol, with a close frame that reaches a client which stopped reading.

The daemon drops a client whose queue of unsent frames is full (close 1013, see connection.py).
uvicorn sends every message, the close included, only when the transport may be written to; for a
client that stopped reading it never may, so the close was never written and the client, reading
again, found the frames then a bare end of stream. Here the close frame is queued behind the frames
the client has not read, so it learns why it was dropped. A client that does not read even that
within `GIVE_UP_S` is cut off (abort), so it cannot hold a file descriptor forever.

It also sends several text messages with one socket write (`SEND_MANY`, advertised in the
connection's ASGI scope under `extensions`): a client's frames that piled up while the loop
was busy go out together instead of one `send` system call each (docs/design.md, "Performance
at scale").

And it frames each text once for all the clients it goes to (`frame`): a server's frames are
neither masked nor, here, compressed, so a notification's frame is the same bytes for every
subscriber. Framing it per client through the protocol object was ~21% of the daemon's time
while fifty conversations streamed to two clients each (docs/design.md, "Costs that stay flat
on real-shaped data").
"""

from __future__ import annotations

import functools
from typing import Any, Final

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import SERVER, State

GIVE_UP_S: Final = 60.0
# The ASGI extension: a `websocket.send` message whose `SEND_MANY` key holds the texts to send
# (its `text` is ignored then), written with one write.
SEND_MANY: Final = "openvaala.websocket.send_many"
# Texts up to this long are framed once and the frame kept for the next client (`frame`); a
# longer one (a snapshot, a page) goes to one client, and keeping it would hold its memory.
_SHARED_TEXT: Final = 16_384


def frame(text: str) -> bytes:
    """The bytes of a server's unmasked, uncompressed text frame carrying `text`."""
    if len(text) > _SHARED_TEXT:
        return _serialize(text)
    return _shared(text)


def _serialize(text: str) -> bytes:
    return Frame(Opcode.TEXT, text.encode()).serialize(mask=False)


# Keyed by the text itself: the one str a notification is encoded to is sent to every
# subscriber, and a str keeps its hash, so a lookup after the first costs an identity check.
_shared = functools.lru_cache(maxsize=256)(_serialize)


class ClosingWebSocketProtocol(WebSocketsSansIOProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._write_paused = False  # the transport's buffer is over its high-water mark

    def pause_writing(self) -> None:
        self._write_paused = True
        super().pause_writing()

    def resume_writing(self) -> None:
        self._write_paused = False
        super().resume_writing()

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None:  # the app's task has not run yet: it sees the extension
            scope["extensions"][SEND_MANY] = {}

    async def send(self, message: Any) -> None:
        texts = message.get(SEND_MANY) if message["type"] == "websocket.send" else None
        if texts is None and message["type"] == "websocket.send" and "text" in message:
            texts = [message["text"]]
        if texts is not None:
            await self._send_many(texts)
            return
        if message["type"] != "websocket.close" or not self._write_paused:
            await super().send(message)
            return
        self.writable.set()  # for this one frame: it goes into the buffer behind the others
        try:
            await super().send(message)
        finally:
            if self._write_paused:
                self.writable.clear()
        if self.close_timer is not None:
            # uvicorn closes `close_timeout` after sending the close; here, that long after the
            # client has read it (up to GIVE_UP_S).
            self.close_timer.cancel()
            self._close_later(self.loop.time() + GIVE_UP_S)

    async def _send_many(self, texts: list[str]) -> None:
        """What `send` does for one text message, for several, with one transport write."""
        await self.writable.wait()
        if self.disconnected:
            raise ClientDisconnected()
        if not self.handshake_complete or self.close_sent or self.initial_response is not None:
            raise RuntimeError("websocket.send outside an open websocket")
        conn = self.conn
        if conn.extensions or conn.side is not SERVER or conn.expect_continuation_frame:
            try:  # a frame of its own per client: through the protocol object
                for text in texts:
                    conn.send_text(text.encode())
                self.transport.write(b"".join(conn.data_to_send()))
            except InvalidState:
                raise ClientDisconnected() from None
            return
        if conn.state is not State.OPEN:  # what `send_text` raises InvalidState for
            raise ClientDisconnected()
        self.transport.write(b"".join(map(frame, texts)))

    def _close_later(self, give_up_at: float) -> None:
        self.close_timer = self.loop.call_later(
            self.close_timeout, self._close_when_read, give_up_at
        )

    def _close_when_read(self, give_up_at: float) -> None:
        if not self.transport.get_write_buffer_size():
            self.transport.close()
        elif self.loop.time() >= give_up_at:
            self.transport.abort()
        else:
            self._close_later(give_up_at)
