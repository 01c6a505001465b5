"""Notifications of the whole daemon, not of one conversation (`config/reloaded`, `config/error`):
every connected client receives them, without subscribing (docs/protocol.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openvaala_server.protocol import jsonrpc
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.runtime.hub import Subscriber

if TYPE_CHECKING:
    from openvaala_server.protocol.calls import Announce


class Broadcast:
    def __init__(self) -> None:
        self._clients: dict[Subscriber, None] = {}
        # Typed by method (protocol/calls.py), as `Hub.publish` is.
        self.publish: Announce = self._publish

    def join(self, client: Subscriber) -> None:
        self._clients[client] = None

    def leave(self, client: Subscriber) -> None:
        self._clients.pop(client, None)

    def _publish(self, method: str, params: JsonMapping) -> None:
        frame = jsonrpc.notification(method, params).decode()  # encoded once for everyone
        for client in list(self._clients):
            client.deliver(frame)
