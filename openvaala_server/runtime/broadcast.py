"""Notifications of the whole daemon, not of one conversation (`config/reloaded`, `config/error`):
every connected client receives them, without subscribing (docs/protocol.md)."""

from __future__ import annotations

from openvaala_server.protocol import jsonrpc
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.runtime.hub import Subscriber


class Broadcast:
    def __init__(self) -> None:
        self._clients: dict[Subscriber, None] = {}

    def join(self, client: Subscriber) -> None:
        self._clients[client] = None

    def leave(self, client: Subscriber) -> None:
        self._clients.pop(client, None)

    def publish(self, method: str, params: JsonMapping) -> None:
        frame = jsonrpc.notification(method, params).decode()  # encoded once for everyone
        for client in list(self._clients):
            client.deliver(frame)
