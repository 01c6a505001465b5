"""The Starlette app: the websocket endpoint, the web app's files, the browser login, health.

The web app lives under `/s/<pathKey>/` (its page, `static/` and `ws`), where the browser's
session cookie is scoped (`web_login.py`); other clients use `/ws` with the token.

Thin: authentication is the middleware's (`security.py`), the logic is the runtime's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from openvaala_server.api import attachments
from openvaala_server.api.bundle_routes import bundle_routes
from openvaala_server.api.connection import Connection
from openvaala_server.api.gate import health_body
from openvaala_server.api.handlers import Dispatcher
from openvaala_server.api.security import Credentials, SecurityMiddleware
from openvaala_server.api.web_sessions import LiveSessions, login_routes, session_routes

if TYPE_CHECKING:
    from openvaala_server.runtime.manager import ConversationManager


def web_root() -> Path | None:
    try:
        from openvaala_web import static_dir
    except ImportError:
        return None
    root = static_dir()
    return root if root.is_dir() else None


# Another protocol served on the same port and token (Codex's app-server, docs/codex.md), made
# from the dispatcher and the per-connection queue limit. Passed in by the server, so this module
# does not import the adapter that imports its connection.
SecondEndpoint = Callable[[Dispatcher, Callable[[], int]], Callable[[WebSocket], Awaitable[None]]]


def build_app(
    runtime: ConversationManager,
    credentials: Credentials,
    second_endpoint: SecondEndpoint | None = None,
) -> SecurityMiddleware:
    dispatcher = Dispatcher(runtime)
    static = web_root()
    live = LiveSessions()

    async def websocket_endpoint(websocket: WebSocket) -> None:
        conn = Connection(websocket, dispatcher, runtime.config.server.client_queue_limit)
        runtime.broadcast.join(conn)  # config/reloaded, config/error (docs/protocol.md)
        session_id = credentials.session_of(websocket.scope)
        if session_id is not None:  # a browser's: closed when its session is ended
            live.join(session_id, id(conn), conn.end)
            conn.still_allowed = partial(credentials.logins.in_use, session_id)
        try:
            await conn.serve()
        finally:
            if session_id is not None:
                live.leave(session_id, id(conn))
            runtime.broadcast.leave(conn)
            runtime.list_feed.leave(conn)

    async def healthz(request: Request) -> Response:
        return Response(health_body(ready=True), media_type="application/json")

    # Reached once the daemon is ready: asked while it starts, it waits (api/gate.py), so a
    # client that started it learns the moment with one request instead of polling.
    ready = healthz

    logins = credentials.logins

    async def root(request: Request) -> Response:
        return PlainTextResponse("OpenVaala is running. Open the web UI with `openvaala web`.")

    async def login_code(request: Request) -> Response:
        # Reached with the token only: a browser session cannot mint codes (not in its path).
        return JSONResponse({"code": logins.new_code()})

    async def logout_all(request: Request) -> Response:
        revoked = logins.revoke_all()
        live.close_every()
        return JSONResponse({"revoked": revoked})

    async def index(request: Request) -> Response:
        if static is None or not (static / "index.html").is_file():
            return PlainTextResponse("OpenVaala is running. The web UI is not installed.")
        return FileResponse(static / "index.html", media_type="text/html")

    app_routes: list[Route | WebSocketRoute | Mount] = [
        Route("/", index),
        Route("/attachments/{cid}/{sha}", attachments.endpoint(runtime.store.data_dir)),
        WebSocketRoute("/ws", websocket_endpoint),
        *bundle_routes(runtime),
        *session_routes(credentials, live, "/sessions"),
    ]
    if static is not None:
        app_routes.append(Mount("/static", StaticFiles(directory=static), name="static"))
    routes: list[Route | WebSocketRoute | Mount] = [
        Route("/", root),
        Route("/healthz", healthz),
        Route("/ready", ready),
        *login_routes(credentials, live),
        Route("/login/code", login_code, methods=["POST"]),
        Route("/login/revoke", logout_all, methods=["POST"]),
        # The same routes as the app's, for clients with the token (the browser uses the app's).
        Route("/attachments/{cid}/{sha}", attachments.endpoint(runtime.store.data_dir)),
        *bundle_routes(runtime),
        WebSocketRoute("/ws", websocket_endpoint),
        # The key in the path is checked by the middleware (a session is valid only under its
        # daemon's current key); the token opens every path.
        Mount("/s/{key}", routes=app_routes),
    ]
    if second_endpoint is not None:
        # The queue limit is read per connection, as for `/ws` (a reload may change it).
        app_server = second_endpoint(dispatcher, lambda: runtime.config.server.client_queue_limit)
        # Codex's app-server protocol for Codex clients (docs/codex.md), with the token only;
        # at `/` too, for `codex --remote ws://host:port` takes no path.
        routes[-1:-1] = [WebSocketRoute("/app-server", app_server), WebSocketRoute("/", app_server)]
    app = Starlette(routes=routes)
    return SecurityMiddleware(app, credentials)
