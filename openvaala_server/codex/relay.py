"""`openvaala app-server`: Codex's app-server protocol over stdio (JSONL), relayed to the
daemon's `/app-server` websocket, so anything that spawns `codex app-server` (the Codex IDE
extension through `CODEX_CLI_PATH`, third-party tools) drives OpenVaala (docs/codex.md).

A line in is a frame out, a frame in is a line out; the daemon does the rest. It finds the
daemon (starting one if none runs) the way every client does; the token goes in a header,
never on a command line. Logs go to stderr: stdout carries the protocol."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from typing import BinaryIO

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from openvaala_server.client.daemon import ensure_server
from openvaala_server.codex.rpc import decode_object

log = logging.getLogger(__name__)


class _Pending:
    """Requests sent and not yet answered: when stdin ends, the answers still come out."""

    def __init__(self) -> None:
        self.ids: set[object] = set()
        self.idle = asyncio.Event()
        self.idle.set()

    def sent(self, line: str) -> None:
        message = decode_object(line)
        if "method" in message and message.get("id") is not None:
            self.ids.add(message["id"])
            self.idle.clear()

    def received(self, text: str) -> None:
        message = decode_object(text)
        if "method" not in message:
            self.ids.discard(message.get("id"))
            if not self.ids:
                self.idle.set()


async def relay(stdin: asyncio.StreamReader, stdout: BinaryIO, address: str, token: str) -> int:
    pending = _Pending()
    async with connect(
        f"ws://{address}/app-server",
        additional_headers={"Authorization": f"Bearer {token}"},
        max_size=None,
        proxy=None,  # loopback: never through the environment's proxy
        compression=None,
    ) as ws:
        upward = asyncio.create_task(_upward(stdin, ws, pending))
        try:
            async for frame in ws:
                text = frame if isinstance(frame, str) else frame.decode()
                stdout.write(text.encode() + b"\n")
                stdout.flush()
                pending.received(text)
        except ConnectionClosed:
            pass
        finally:
            upward.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await upward
    return 0


async def _upward(stdin: asyncio.StreamReader, ws: ClientConnection, pending: _Pending) -> None:
    while line := await stdin.readline():
        text = line.decode("utf-8", errors="replace").strip()
        if text:
            pending.sent(text)
            await ws.send(text)
    await pending.idle.wait()  # stdin ended: the session ends once every request is answered
    await ws.close()


async def _serve() -> int:
    try:
        address, token = await asyncio.to_thread(ensure_server)
    except RuntimeError as exc:
        print(f"openvaala app-server: {exc}", file=sys.stderr)
        return 4
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)  # a line may carry images
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        return await relay(reader, sys.stdout.buffer, address, token)
    except OSError as exc:
        print(f"openvaala app-server: cannot reach the daemon at {address}: {exc}", file=sys.stderr)
        return 4


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_serve())
    return 130
