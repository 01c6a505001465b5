"""The daemon's front door while its runtime is being built (docs/design.md, "Serving before
the runtime is built").

The daemon serves as soon as it holds its lock, its token and its socket; the store, the
conversation manager and the app are built right after. Until then this ASGI app answers
`GET /healthz` itself, with `"ready": false`, and every other request waits for the app (it is
served when the app exists, never refused). A start that fails, or a stop during the build,
closes the gate: what waited is answered 503 (a websocket is closed with 1012, "service
restart"), so no client waits on a daemon that is going away.

Behind `SecurityMiddleware`: the Host, Origin and token checks happen before anything waits.
"""

from __future__ import annotations

from typing import Final

import anyio

from openvaala_server.api.security import ASGIApp, Receive, Scope, Send
from openvaala_server.protocol import codec

HEALTH_PATH: Final = "/healthz"
# The websocket close code for "the server is restarting / going away before it served you".
CLOSED_CODE: Final = 1012


def health_body(ready: bool) -> bytes:
    """`/healthz`'s answer (docs/protocol.md): the daemon answers; `ready` once it serves
    conversations (its runtime is built and the turns a crash cut are recovered)."""
    return codec.dumps({"status": "ok", "ready": ready})


class Gate:
    """Holds requests until `open(app)`; `close()` turns them away. Runs on the daemon's loop."""

    def __init__(self) -> None:
        self._app: ASGIApp | None = None
        self._settled = anyio.Event()  # set by open() or close()

    @property
    def ready(self) -> bool:
        return self._app is not None

    def open(self, app: ASGIApp) -> None:
        self._app = app
        self._settled.set()

    def close(self) -> None:
        self._settled.set()  # a no-op once open: the app serves on

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app is None and scope["type"] == "http" and scope.get("path") == HEALTH_PATH:
            await _answer(send, 200, health_body(ready=False), b"application/json")
            return
        await self._settled.wait()
        if self._app is not None:
            await self._app(scope, receive, send)
        elif scope["type"] == "http":
            await _answer(send, 503, b"the OpenVaala server is stopping", b"text/plain")
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": CLOSED_CODE})


async def _answer(send: Send, status: int, body: bytes, content_type: bytes) -> None:
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
