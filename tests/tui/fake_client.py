"""A client without a daemon, for terminal UI tests of what the UI does with data it already has
(a picker's order, the palette, a key): `FakeClient` is a `Client` (the same typed interface
the app takes) whose requests are answered in process from `answers`, and whose notifications
are what the test `publish`es. Tests of what the daemon does with a command start the real
daemon (tests/README.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from openvaala_server.client import Client, RpcError
from openvaala_server.domain.ids import new_id

if TYPE_CHECKING:  # a type only (notes.py declares it so)
    from openvaala_server.client.notes import Note

CWD = "/home/user/project"

Answer = Callable[[dict[str, Any]], Any]


def not_found(method: str) -> RpcError:
    return RpcError(
        {"code": -32601, "message": f"the fake client has no answer for {method}", "data": {}}
    )


def model(name: str) -> dict[str, Any]:
    """A model as `models/list` describes it (payloads.ModelInfo)."""
    return {
        "name": name,
        "provider": "demo",
        "model": name,
        "contextWindow": 100_000,
        "contextWindowSource": "config",
        "maxOutputTokens": 8_000,
    }


class FakeClient(Client):
    """Answers the requests a conversation's opening needs (create, subscribe: one empty
    conversation) and whatever `answers` adds; records every request in `requests`."""

    def __init__(
        self, answers: Mapping[str, Answer] | None = None, models: tuple[str, ...] = ("demo",)
    ) -> None:
        super().__init__("127.0.0.1:0", "fake", client_name="openvaala-tui", reconnect=False)
        self.models = models  # the first is the conversation's
        self.conversation_id = new_id()
        self.root_id = new_id()
        self.cwd = CWD  # the conversation's, from `conversation/create`
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.answers: dict[str, Answer] = {
            "conversation/create": self._create,
            "conversation/subscribe": self._subscribe,
            "conversation/unsubscribe": lambda params: {},
            "models/list": lambda params: {"models": [model(name) for name in self.models]},
            "mcp/list": lambda params: {"servers": []},
            **(answers or {}),
        }
        self._connected.set()

    def _create(self, params: dict[str, Any]) -> dict[str, Any]:
        self.cwd = str(params.get("cwd", self.cwd))
        return {"conversation": self._conversation()}

    def _subscribe(self, params: dict[str, Any]) -> dict[str, Any]:
        # Whichever conversation is asked for is the one empty conversation, under that id.
        self.conversation_id = str(params["conversationId"])
        return {"seq": 1, "snapshot": self._snapshot()}

    def _conversation(self) -> dict[str, Any]:
        return {
            "conversationId": self.conversation_id,
            "cwd": self.cwd,
            "rootSessionId": self.root_id,
        }

    def _snapshot(self) -> dict[str, Any]:
        return {
            "conversation": self._conversation(),
            "sessions": [
                {
                    "sessionId": self.root_id,
                    "agent": "default",
                    "model": self.models[0],
                    "status": "idle",
                    "items": [],
                    "turn": None,
                }
            ],
        }

    async def _request(
        self,
        method: str,
        params: Mapping[str, object] | None = None,
        *,
        timeout: float = 60,
        on_result: Callable[[Any], None] | None = None,
    ) -> Any:
        given = dict(params or {})
        self.requests.append((method, given))
        # An answer comes in a later turn of the loop, as over a socket (no time passes): code
        # that runs meanwhile (a worker just started) runs as it would with the daemon.
        await asyncio.sleep(0)
        answer = self.answers.get(method)
        if answer is None:
            raise not_found(method)
        result = answer(given)
        if on_result is not None:
            on_result(result)
        return result

    def publish(self, note: Note) -> None:
        """A notification, as if the daemon had sent it."""
        self._note(note)

    def methods(self) -> list[str]:
        return [method for method, _ in self.requests]
