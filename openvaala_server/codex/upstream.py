"""The bridge's OpenVaala connection, inside the daemon: the daemon's own methods, called in
process (no socket, no token: the Codex connection was authenticated at its upgrade), and the
notifications of the conversations it subscribes to, handed to `on_note` as they are published.

It is an `api.connection.Connection` that is never served: the handlers see an ordinary
client, so every rule of the OpenVaala protocol (docs/protocol.md) holds for a Codex client."""

from __future__ import annotations

import logging
from collections.abc import Callable

from starlette.websockets import WebSocket

from openvaala_server import errors
from openvaala_server.api.connection import Connection, Dispatcher, Reply
from openvaala_server.protocol import codec
from openvaala_server.protocol.json_types import JsonMapping, JsonObject, JsonValue

log = logging.getLogger(__name__)

NoteHandler = Callable[[str, JsonObject], None]


class Upstream(Connection):
    def __init__(
        self, websocket: WebSocket, dispatcher: Dispatcher, queue_limit: int, on_note: NoteHandler
    ) -> None:
        super().__init__(websocket, dispatcher, queue_limit)
        self.initialized = True
        self.client_info = {"name": "codex-app-server"}
        self._on_note = on_note

    def deliver(self, frame: str) -> None:
        """A notification of a subscribed conversation, in publication order."""
        if self.dropped:
            return
        message = codec.loads(frame)
        if isinstance(message, dict) and isinstance(message.get("method"), str):
            params = message.get("params")
            self._on_note(str(message["method"]), params if isinstance(params, dict) else {})

    async def request(self, method: str, params: JsonMapping) -> JsonObject:
        """One OpenVaala method's result, as plain JSON; its error is raised as is."""
        reply = await self.dispatcher.dispatch(self, method, codec.loads(codec.dumps(params)))  # type: ignore[arg-type]
        then = None
        if isinstance(reply, Reply):
            reply, then = reply.result, reply.then
        # Through the codec: rows the index sends pre-encoded become values, TypedDicts dicts.
        value: JsonValue = codec.loads(codec.dumps(reply))
        if then is not None:
            then()
        if not isinstance(value, dict):
            raise errors.OpenVaalaError(f"{method} answered something that is not an object")
        return value

    def close(self) -> None:
        self.dropped = True
        for cid in list(self.subscriptions):
            self.unsubscribe(cid)
