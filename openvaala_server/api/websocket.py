"""uvicorn's websocket protocol, with a close frame that reaches a client which stopped reading.

The daemon drops a client whose queue of unsent frames is full (close 1013, see connection.py).
uvicorn sends every message, the close included, only when the transport may be written to; for a
client that stopped reading it never may, so the close was never written and the client, reading
again, found the frames then a bare end of stream. Here the close frame is queued behind the frames
the client has not read, so it learns why it was dropped. A client that does not read even that
within `GIVE_UP_S` is cut off (abort), so it cannot hold a file descriptor forever.
"""

from __future__ import annotations

from typing import Any, Final

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

GIVE_UP_S: Final = 60.0


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

    async def send(self, message: Any) -> None:
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
