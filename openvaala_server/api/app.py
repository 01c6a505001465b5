"""The Starlette app: the websocket endpoint, the web app's files, the browser login, health.

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
from openvaala_server.api.security import COOKIE_NAME, Credentials, SecurityMiddleware
from openvaala_server.runtime.manager import Runtime


def web_root() -> Path | None:
    try:
        from openvaala_web import static_dir
    except ImportError:
        return None
    root = static_dir()
    return root if root.is_dir() else None


def build_app(runtime: Runtime, credentials: Credentials) -> SecurityMiddleware:
    dispatcher = Dispatcher(runtime)
    static = web_root()

    async def websocket_endpoint(websocket: WebSocket) -> None:
        conn = Connection(websocket, dispatcher, runtime.config.server.client_queue_limit)
        runtime.broadcast.join(conn)  # config/reloaded, config/error (docs/protocol.md)
        try:
            await conn.serve()
        finally:
            runtime.broadcast.leave(conn)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def index(request: Request) -> Response:
        token = request.query_params.get("token")
        if token is not None:
            if not credentials.token_ok(token):
                return PlainTextResponse("Wrong token: open the web UI with `openvaala web`", 401)
            # Trade the token for a cookie and drop it from the address bar and history.
            response = RedirectResponse("/", status_code=303)
            response.set_cookie(
                COOKIE_NAME, credentials.cookie_secret, httponly=True, samesite="strict", path="/"
            )
            return response
        if static is None or not (static / "index.html").is_file():
            return PlainTextResponse("OpenVaala is running. The web UI is not installed.")
        return FileResponse(static / "index.html", media_type="text/html")

    routes: list[Route | WebSocketRoute | Mount] = [
        Route("/", index),
        Route("/healthz", healthz),
        Route("/attachments/{cid}/{sha}", attachments.endpoint(runtime.store.data_dir)),
        WebSocketRoute("/ws", websocket_endpoint),
        *bundle_routes(runtime),
    ]
    if static is not None:
        routes.append(Mount("/static", StaticFiles(directory=static), name="static"))
    app = Starlette(routes=routes)
    return SecurityMiddleware(app, credentials)
