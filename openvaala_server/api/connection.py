"""One client's websocket: read frames, dispatch requests, send responses and events.

Every outgoing frame — responses and the notifications of every conversation this client
subscribes to — goes through one bounded queue drained by one sender task, so a response is never
overtaken by events it precedes. A client that stops reading fills its queue and is dropped (close
1013); it never slows the turn or the other clients, and memory stays bounded.

Back-pressure, not drops, for a client's own requests: while half its queue waits to be sent, its
next request is not read (its frames wait in the socket), so a client that sends many requests
without waiting for answers is slowed to the pace it reads them, never dropped for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from anyio.abc import TaskGroup
from starlette.websockets import WebSocket, WebSocketDisconnect

from openvaala_server import errors
from openvaala_server.api.websocket import SEND_MANY
from openvaala_server.protocol import jsonrpc, methods

if TYPE_CHECKING:
    from openvaala_server.runtime.hub import Hub

log = logging.getLogger(__name__)


class Dispatcher(Protocol):
    """Answers one request (`api/handlers.Dispatcher`); named here so the handlers, which take
    a `Connection`, are not imported back (docs/design.md "Untangled runtime")."""

    async def dispatch(self, conn: Connection, method: str, raw: dict[str, Any]) -> Any: ...


CLOSE_TRY_AGAIN = 1013  # the client fell too far behind; it may reconnect and resubscribe
SEND_BATCH = 256  # frames written together at most (a backlog goes out in a few writes)
CLOSE_WAIT_S = 2.0  # for the close handshake with a client that was dropped


# Requests that may take long (a model call, an MCP server filling in a prompt or reading a
# resource): they must not hold up the client's other requests. Held in line, a slow MCP server
# kept the connection from reading at all, and the client's keepalive dropped it after ~40 s.
LONG_RUNNING_METHODS = frozenset(
    {methods.CONVERSATION_COMPACT, methods.MCP_GET_PROMPT, methods.MCP_READ_RESOURCE}
)


class Reply:
    """A handler's result plus work to do right after the response is queued (e.g. replay)."""

    def __init__(self, result: Any, then: Callable[[], None] | None = None) -> None:
        self.result = result
        self.then = then


class Connection:
    def __init__(self, websocket: WebSocket, dispatcher: Dispatcher, queue_limit: int) -> None:
        self.websocket = websocket
        self.dispatcher = dispatcher
        self.queue: asyncio.Queue[str] = asyncio.Queue(maxsize=queue_limit)
        self.initialized = False
        self.client_info: dict[str, Any] = {}
        self.subscriptions: dict[str, Hub] = {}
        self.dropped = False
        # The connection's tasks (its sender, its long requests) and its reading: cancelled all
        # together when the client leaves or is dropped (docs/design.md "Structured concurrency").
        self._group: TaskGroup | None = None
        # Requests are read only while fewer than this many frames wait (see the docstring).
        self._read_below = max(1, queue_limit // 2)
        self._room = asyncio.Event()  # set by the sender when the queue is below `_read_below`
        self._room.set()
        # A browser session's connection asks this before each request: False once the session
        # ended (idle too long: docs/security.md), and the connection is closed instead.
        self.still_allowed: Callable[[], bool] | None = None
        # Called once the client has gone (a file host is released: runtime/file_hosts.py).
        self.on_close: list[Callable[[], None]] = []

    # -- Subscriber ----------------------------------------------------------------------

    def deliver(self, frame: str) -> None:
        if self.dropped:
            return
        try:
            self.queue.put_nowait(frame)
        except asyncio.QueueFull:
            self.drop()

    def drop(self) -> None:
        """Stop serving a client that does not keep up."""
        if self.dropped:
            return
        self.dropped = True
        log.info("dropping a client that stopped reading (%d frames waiting)", self.queue.qsize())
        self._unsubscribe_all()
        if self._group is not None:
            self._group.cancel_scope.cancel()

    def end(self) -> None:
        """Stop serving a client whose browser session was ended (docs/security.md)."""
        if self._group is not None:
            self._group.cancel_scope.cancel()

    # -- serving -------------------------------------------------------------------------

    async def serve(self) -> None:
        await self.websocket.accept()
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                group.start_soon(self._send_loop, name="ws-send")
                await self._receive_loop()
                group.cancel_scope.cancel()  # the client left: stop its sender and requests
        finally:
            self._group = None
            self._unsubscribe_all()
            for closed in self.on_close:
                closed()
        if self.dropped:
            with anyio.move_on_after(CLOSE_WAIT_S), contextlib.suppress(Exception):
                await self.websocket.close(CLOSE_TRY_AGAIN)

    async def _send_loop(self) -> None:
        send = self.websocket.send
        queue = self.queue
        # Frames that piled up (the loop was busy, a burst of events) go out with one socket
        # write where the server can (api/websocket.py SEND_MANY), in order.
        many = SEND_MANY in self.websocket.scope.get("extensions", {})
        try:
            while True:
                frame = await queue.get()
                if many and not queue.empty():
                    frames = [frame]
                    while not queue.empty() and len(frames) < SEND_BATCH:
                        frames.append(queue.get_nowait())
                    await send({"type": "websocket.send", "text": "", SEND_MANY: frames})
                else:
                    await send({"type": "websocket.send", "text": frame})
                if queue.qsize() < self._read_below:
                    self._room.set()
        except Exception as exc:  # the socket is gone: the receiver sees the disconnect
            log.debug("stopped sending to a client: %r", exc)
        finally:
            # Gone (the client disconnected): the receiver must not wait for room, but read
            # on and see the disconnect.
            self._room.set()

    async def _wait_for_room(self) -> None:
        if self.queue.qsize() >= self._read_below:
            self._room.clear()
            await self._room.wait()

    async def _receive_loop(self) -> None:
        while True:
            await self._wait_for_room()
            try:
                message = await self.websocket.receive()
            except WebSocketDisconnect:
                return
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                self.deliver(
                    jsonrpc.error(
                        None, errors.InvalidRequest("send JSON-RPC as text frames")
                    ).decode()
                )
                continue
            incoming = jsonrpc.parse(text)
            if isinstance(incoming, jsonrpc.Invalid):
                self.deliver(jsonrpc.error(incoming.id, incoming.error).decode())
            elif not isinstance(incoming, jsonrpc.Request):
                pass  # notifications and responses from clients carry nothing we act on
            elif incoming.method in LONG_RUNNING_METHODS:
                # Handled beside the loop, so the client can still interrupt it meanwhile.
                assert self._group is not None
                self._group.start_soon(self._handle, incoming, name="ws-long-request")
            else:
                await self._handle(incoming)

    async def _handle(self, incoming: jsonrpc.Request) -> None:
        if self.still_allowed is not None and not self.still_allowed():
            self.end()
            return
        try:
            reply = await self.dispatcher.dispatch(self, incoming.method, incoming.params)
        except errors.OpenVaalaError as exc:
            self.deliver(jsonrpc.error(incoming.id, exc).decode())
            return
        except Exception:
            log.exception("request %s failed", incoming.method)
            internal = errors.OpenVaalaError("internal error: the server log has the details")
            self.deliver(jsonrpc.error(incoming.id, internal).decode())
            return
        if isinstance(reply, Reply):
            self.deliver(jsonrpc.result(incoming.id, reply.result).decode())
            if reply.then is not None:
                reply.then()
        else:
            self.deliver(jsonrpc.result(incoming.id, reply).decode())

    # -- subscriptions -------------------------------------------------------------------

    def subscribe(self, conversation_id: str, hub: Hub) -> None:
        old = self.subscriptions.pop(conversation_id, None)
        if old is not None:
            old.unsubscribe(self)
        self.subscriptions[conversation_id] = hub
        hub.subscribe(self)

    def unsubscribe(self, conversation_id: str) -> bool:
        hub = self.subscriptions.pop(conversation_id, None)
        if hub is None:
            return False
        hub.unsubscribe(self)
        return True

    def _unsubscribe_all(self) -> None:
        for hub in self.subscriptions.values():
            hub.unsubscribe(self)
        self.subscriptions.clear()
