"""The local end of `web --remote`: 127.0.0.1:L here, for this machine's browser, to the ssh
forward of the remote daemon (docs/remote.md, "The browser").

The daemon accepts only its own Host and Origin (docs/security.md), and its port over there may
be taken here (a local daemon on the default port), so each request head is rewritten for it
(`head.for_browser`); bodies, answers and websockets pass as they are."""

from __future__ import annotations

import asyncio
import contextlib

from openvaala_server.remote import head

CHUNK = 256 * 1024


class Proxy:
    def __init__(self, upstream: str | tuple[str, int], daemon: str) -> None:
        self.upstream = upstream  # the ssh forward's local end: its socket, or a TCP address
        self.daemon = daemon  # the daemon's address over there, as its Host checks want it
        self.here = ""  # 127.0.0.1:L, once listening
        self._server: asyncio.Server | None = None

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.here = f"127.0.0.1:{port}"
        return self.here

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if isinstance(self.upstream, str):
                up_reader, up_writer = await asyncio.open_unix_connection(self.upstream)
            else:
                up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        answers = asyncio.create_task(_pipe(up_reader, writer))
        try:
            await self._requests(reader, up_writer)
        except (head.BadHead, OSError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(OSError):
                up_writer.write_eof()
            await asyncio.wait([answers], timeout=30)
            answers.cancel()
            for w in (writer, up_writer):
                w.close()

    async def _requests(self, reader: asyncio.StreamReader, up: asyncio.StreamWriter) -> None:
        """Each request head rewritten, its body as it is; after an upgrade, everything."""
        buffer = b""
        while True:
            while (found := head.split(buffer)) is None:
                chunk = await reader.read(CHUNK)
                if not chunk:
                    return
                buffer += chunk
            request, buffer = found
            forward = head.for_browser(request, self.daemon, self.here)
            up.write(forward.head)
            if forward.upgrade:
                up.write(buffer)
                await _pipe(reader, up)
                return
            while len(buffer) < forward.length:
                buffer += await reader.readexactly(min(CHUNK, forward.length - len(buffer)))
            up.write(buffer[: forward.length])
            buffer = buffer[forward.length :]
            await up.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while chunk := await reader.read(CHUNK):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
