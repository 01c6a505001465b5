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
"""

from __future__ import annotations

from typing import Any, Final

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.http11 import Request

GIVE_UP_S: Final = 60.0
# The ASGI extension: a `websocket.send` message whose `SEND_MANY` key holds the texts to send
# (its `text` is ignored then), written with one write.
SEND_MANY: Final = "openvaala.websocket.send_many"


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
        try:
            for text in texts:
                self.conn.send_text(text.encode())
            self.transport.write(b"".join(self.conn.data_to_send()))
        except InvalidState:
            raise ClientDisconnected() from None

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
