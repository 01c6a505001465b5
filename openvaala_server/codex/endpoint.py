"""The `/app-server` websocket: Codex's app-server protocol on the daemon's port
(docs/codex.md). Authentication, Host and Origin are checked before the upgrade, as for every
route (api/security.py): Codex's `--remote-auth-token-env` sends the token as a bearer header.

One message per text frame, each way. Outgoing messages go through one bounded queue and one
sender, in order; a client that stops reading is dropped (close 1013), as on `/ws`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import anyio
from starlette.websockets import WebSocket, WebSocketDisconnect

from openvaala_server import errors
from openvaala_server.api.connection import CLOSE_TRY_AGAIN, Dispatcher
from openvaala_server.codex import rpc
from openvaala_server.codex.session import CodexSession, SessionDirectory
from openvaala_server.codex.upstream import NoteHandler, Upstream

log = logging.getLogger(__name__)

Endpoint = Callable[[WebSocket], Awaitable[None]]


def app_server_endpoint(dispatcher: Dispatcher, queue_limit: Callable[[], int]) -> Endpoint:
    directory = SessionDirectory()

    async def endpoint(websocket: WebSocket) -> None:
        await websocket.accept()
        limit = queue_limit()
        queue: asyncio.Queue[str] = asyncio.Queue(maxsize=limit)
        dropped = anyio.Event()

        def send(text: str) -> None:
            try:
                queue.put_nowait(text)
            except asyncio.QueueFull:
                log.info("dropping a Codex client that stopped reading")
                dropped.set()

        async def sender() -> None:
            with contextlib.suppress(Exception):  # the socket is gone: the reader sees it
                while True:
                    await websocket.send_text(await queue.get())

        def upstream(on_note: NoteHandler) -> Upstream:
            return Upstream(websocket, dispatcher, limit, on_note)

        async with anyio.create_task_group() as group:

            def spawn(work: Callable[[], Coroutine[Any, Any, None]]) -> None:
                group.start_soon(work)

            session = CodexSession(upstream, send, spawn, directory)
            group.start_soon(sender)

            async def watch_drop() -> None:
                await dropped.wait()
                group.cancel_scope.cancel()

            group.start_soon(watch_drop)
            try:
                await _receive(websocket, session, send)
            finally:
                session.close()
                group.cancel_scope.cancel()
        if dropped.is_set():
            with anyio.move_on_after(2), contextlib.suppress(Exception):
                await websocket.close(CLOSE_TRY_AGAIN)

    return endpoint


async def _receive(
    websocket: WebSocket, session: CodexSession, send: Callable[[str], None]
) -> None:
    while True:
        try:
            message = await websocket.receive()
        except WebSocketDisconnect:
            return
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:
            send(rpc.error(None, errors.InvalidRequest("send each message as a text frame")))
            continue
        await session.handle(text)
