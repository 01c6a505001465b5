"""Browser sign-in and browser sessions over HTTP (docs/protocol.md, "Browser login").

Thin handlers over `web_login.WebLogins`:
- `POST /login` trades a one-time code, posted by the sign-in file's form (`login_page.py`), for a
  session cookie, if the connection comes from a process of the user running the daemon
  (`peer.py`); a refused attempt does not use the code up.
- `GET /login/sessions` and `POST /login/sessions/<id>/end` (token: `openvaala web --sessions`,
  `--end`), and the same under the web app's path, `sessions` and `sessions/<id>/end` (the
  browser's own session, which the listing marks `current`).
Ending a session also closes the websockets it opened (`LiveSessions`), so its tabs sign out now,
not at their next reconnect.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from openvaala_server.api.peer import peer_uid
from openvaala_server.api.security import Credentials
from openvaala_server.api.web_login import SESSION_TTL

MAX_FORM_BYTES = 4096  # a code is 32 characters; anything far larger is not our form
SIGN_IN_AGAIN = "This sign-in link was already used or has expired: run `openvaala web` again."
OTHER_USER = (
    "This sign-in came from a process of another user of this computer: only a browser of the "
    "user running OpenVaala can sign in."
)


class LiveSessions:
    """The open websockets of each browser session, to close when the session ends."""

    def __init__(self) -> None:
        self._closers: dict[str, dict[int, Callable[[], None]]] = {}

    def join(self, session_id: str, key: int, close: Callable[[], None]) -> None:
        self._closers.setdefault(session_id, {})[key] = close

    def leave(self, session_id: str, key: int) -> None:
        self._closers.get(session_id, {}).pop(key, None)

    def close_all(self, session_id: str) -> None:
        for close in list(self._closers.pop(session_id, {}).values()):
            close()

    def close_every(self) -> None:
        for session_id in list(self._closers):
            self.close_all(session_id)


def _moving_on(app_path: str) -> str:
    # A page rather than a redirect: the form was posted from a file (another site), and the
    # browser would not send a SameSite=Strict cookie along a redirect that such a post began;
    # a refresh this page starts is the daemon's own site.
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        f'<meta http-equiv="refresh" content="0;url={app_path}">'
        "<title>OpenVaala</title></head><body><p>Signed in. Opening OpenVaala…</p></body></html>"
    )


async def _posted_code(request: Request) -> str | None:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return None
    codes = parse_qs(body.decode("latin-1")).get("code", [])
    return codes[0] if len(codes) == 1 else None


def login_routes(credentials: Credentials, live: LiveSessions) -> list[Route]:
    """The routes outside the app's path: sign-in, and the session list for token holders."""
    logins = credentials.logins

    async def login(request: Request) -> Response:
        if request.method != "POST":  # an old `?code=` address, a bookmark
            return PlainTextResponse(SIGN_IN_AGAIN, 401)
        code = await _posted_code(request)
        if not code:
            return PlainTextResponse(SIGN_IN_AGAIN, 401)
        if peer_uid(request.scope.get("client"), request.scope.get("server")) != os.getuid():
            return PlainTextResponse(OTHER_USER, 403)
        secret = logins.redeem(code, request.headers.get("user-agent", ""))
        if secret is None:
            return PlainTextResponse(SIGN_IN_AGAIN, 401)
        response = HTMLResponse(_moving_on(logins.app_path))
        response.set_cookie(
            logins.cookie_name,
            secret,
            max_age=int(SESSION_TTL),
            path=logins.app_path,
            httponly=True,
            samesite="strict",
        )
        return response

    return [
        Route("/login", login, methods=["GET", "POST"]),
        *session_routes(credentials, live, "/login/sessions"),
    ]


def session_routes(credentials: Credentials, live: LiveSessions, base: str) -> list[Route]:
    """List and end browser sessions at `base` and `base/<id>/end`."""
    logins = credentials.logins

    async def listing(request: Request) -> Response:
        current = credentials.session_of(request.scope)
        sessions = [{**s, "current": s["id"] == current} for s in logins.list_sessions()]
        return JSONResponse({"sessions": sessions})

    async def end(request: Request) -> Response:
        session_id = request.path_params["sid"]
        if not logins.end(session_id):
            return JSONResponse({"error": f"no browser session {session_id}"}, 404)
        live.close_all(session_id)
        return JSONResponse({"ended": session_id})

    return [
        Route(base, listing),
        Route(base + "/{sid}/end", end, methods=["POST"]),
    ]
