"""The Starlette app: the websocket endpoint, the web app's files, the browser login, health.

The web app lives under `/s/<pathKey>/` (its page, `static/` and `ws`), where the browser's
session cookie is scoped (`web_login.py`); other clients use `/ws` with the token.

Thin: authentication is the middleware's (`security.py`), the logic is the runtime's.
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from openvaala_server.api import attachments
from openvaala_server.api.bundle_routes import bundle_routes
from openvaala_server.api.connection import Connection
from openvaala_server.api.handlers import Dispatcher
from openvaala_server.api.security import Credentials, SecurityMiddleware
from openvaala_server.api.web_login import SESSION_TTL
from openvaala_server.codex.endpoint import app_server_endpoint
from openvaala_server.runtime.manager import ConversationManager


def web_root() -> Path | None:
    try:
        from openvaala_web import static_dir
    except ImportError:
        return None
    root = static_dir()
    return root if root.is_dir() else None


def build_app(runtime: ConversationManager, credentials: Credentials) -> SecurityMiddleware:
    dispatcher = Dispatcher(runtime)
    # The queue limit is read per connection, as for `/ws` (a reload may change it).
    app_server = app_server_endpoint(dispatcher, lambda: runtime.config.server.client_queue_limit)
    static = web_root()

    async def websocket_endpoint(websocket: WebSocket) -> None:
        conn = Connection(websocket, dispatcher, runtime.config.server.client_queue_limit)
        runtime.broadcast.join(conn)  # config/reloaded, config/error (docs/protocol.md)
        try:
            await conn.serve()
        finally:
            runtime.broadcast.leave(conn)
            runtime.list_feed.leave(conn)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    logins = credentials.logins

    async def root(request: Request) -> Response:
        return PlainTextResponse("OpenVaala is running. Open the web UI with `openvaala web`.")

    async def login(request: Request) -> Response:
        # Trade a one-time code for a session cookie scoped to the app's path.
        code = request.query_params.get("code")
        secret = logins.redeem(code) if code else None
        if secret is None:
            return PlainTextResponse(
                "This sign-in link was already used or has expired: run `openvaala web` again.",
                401,
            )
        response = RedirectResponse(logins.app_path, status_code=303)
        response.set_cookie(
            logins.cookie_name,
            secret,
            max_age=int(SESSION_TTL),
            path=logins.app_path,
            httponly=True,
            samesite="strict",
        )
        return response

    async def login_code(request: Request) -> Response:
        # Reached with the token only: a browser session cannot mint codes (not in its path).
        code = logins.new_code()
        return JSONResponse({"code": code, "path": f"/login?code={code}"})

    async def logout_all(request: Request) -> Response:
        return JSONResponse({"revoked": logins.revoke_all()})

    async def index(request: Request) -> Response:
        if static is None or not (static / "index.html").is_file():
            return PlainTextResponse("OpenVaala is running. The web UI is not installed.")
        return FileResponse(static / "index.html", media_type="text/html")

    app_routes: list[Route | WebSocketRoute | Mount] = [
        Route("/", index),
        Route("/attachments/{cid}/{sha}", attachments.endpoint(runtime.store.data_dir)),
        WebSocketRoute("/ws", websocket_endpoint),
        *bundle_routes(runtime),
    ]
    if static is not None:
        app_routes.append(Mount("/static", StaticFiles(directory=static), name="static"))
    routes: list[Route | WebSocketRoute | Mount] = [
        Route("/", root),
        Route("/healthz", healthz),
        Route("/login", login),
        Route("/login/code", login_code, methods=["POST"]),
        Route("/login/revoke", logout_all, methods=["POST"]),
        # The same routes as the app's, for clients with the token (the browser uses the app's).
        Route("/attachments/{cid}/{sha}", attachments.endpoint(runtime.store.data_dir)),
        *bundle_routes(runtime),
        WebSocketRoute("/ws", websocket_endpoint),
        # Codex's app-server protocol for Codex clients (docs/codex.md), with the token only;
        # at `/` too, for `codex --remote ws://host:port` takes no path.
        WebSocketRoute("/app-server", app_server),
        WebSocketRoute("/", app_server),
        # The key in the path is checked by the middleware (a session is valid only under its
        # daemon's current key); the token opens every path.
        Mount("/s/{key}", routes=app_routes),
    ]
    app = Starlette(routes=routes)
    return SecurityMiddleware(app, credentials)
