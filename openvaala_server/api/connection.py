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

from starlette.websockets import WebSocket, WebSocketDisconnect

from openvaala_server import errors
from openvaala_server.protocol import jsonrpc

if TYPE_CHECKING:
    from openvaala_server.runtime.hub import Hub

log = logging.getLogger(__name__)


class Dispatcher(Protocol):
    """Answers one request (`api/handlers.Dispatcher`); named here so the handlers, which take
    a `Connection`, are not imported back (docs/design.md "Untangled runtime")."""

    async def dispatch(self, conn: Connection, method: str, raw: dict[str, Any]) -> Any: ...


CLOSE_TRY_AGAIN = 1013  # the client fell too far behind; it may reconnect and resubscribe


# Requests that may take long (a model call): they must not hold up the client's other requests.
LONG_RUNNING_METHODS = frozenset({"conversation/compact"})


def _is_long_running(frame: str) -> bool:
    # A cheap look before parsing: only a frame naming such a method is parsed twice.
    return any(f'"{m}"' in frame for m in LONG_RUNNING_METHODS)


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
        self._sender: asyncio.Task[None] | None = None
        self._receiver: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()  # long requests under way
        # Requests are read only while fewer than this many frames wait (see the docstring).
        self._read_below = max(1, queue_limit // 2)
        self._room = asyncio.Event()  # set by the sender when the queue is below `_read_below`
        self._room.set()

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
        if self._receiver is not None:
            self._receiver.cancel()

    # -- serving -------------------------------------------------------------------------

    async def serve(self) -> None:
        await self.websocket.accept()
        self._sender = asyncio.create_task(self._send_loop())
        self._receiver = asyncio.create_task(self._receive_loop())
        try:
            await self._receiver
        except asyncio.CancelledError:
            if not self.dropped:
                raise
        finally:
            self._unsubscribe_all()
            for task in self._background:
                task.cancel()
            self._sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._sender
        if self.dropped:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.websocket.close(CLOSE_TRY_AGAIN), 2)

    async def _send_loop(self) -> None:
        send = self.websocket.send
        try:
            while True:
                frame = await self.queue.get()
                await send({"type": "websocket.send", "text": frame})
                if self.queue.qsize() < self._read_below:
                    self._room.set()
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
            if _is_long_running(text):
                # Handled beside the loop, so the client can still interrupt it meanwhile.
                task = asyncio.create_task(self._handle(text))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
            else:
                await self._handle(text)

    async def _handle(self, frame: str) -> None:
        incoming = jsonrpc.parse(frame)
        if isinstance(incoming, jsonrpc.Invalid):
            self.deliver(jsonrpc.error(incoming.id, incoming.error).decode())
            return
        if not isinstance(incoming, jsonrpc.Request):
            return  # notifications and responses from clients carry nothing we act on
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
