"""Who may talk to the daemon: pure ASGI middleware guarding every HTTP route and the websocket.

The daemon runs tools with the user's rights, so reaching it must be as hard as logging in:
- `Host` must be exactly 127.0.0.1:port, localhost:port or [::1]:port (defeats DNS rebinding);
- `Origin` must be absent (TUI, LSP, scripts) or exactly the daemon's own origin (the browser);
  `POST /login` also takes `null`, the origin of the sign-in file's form (`login_page.py`);
- every route but `/healthz` and `/login` needs the token, `Authorization: Bearer <token>`, or,
  under the web app's own path only, a browser session cookie (`web_login.py`: the browser gets it
  for a one-time login code, never for the token).
Refusals happen before a websocket is accepted: 403 for Host/Origin, 401 for a missing or wrong
token. The token is compared in constant time and never logged.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any

from openvaala_server.api.web_login import WebLogins

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Sent with every HTTP response: the web app loads nothing from outside the daemon, runs no
# inline script, and no other site may frame it. No CORS header is ever sent.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        b"frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
)
# `/login` checks its one-time code itself (and answers 401 without a good one).
PUBLIC_PATHS = frozenset({"/healthz", "/login"})


class Credentials:
    """The secrets of one server start: the token clients present, and the browser sessions."""

    def __init__(self, token: str, port: int, logins: WebLogins) -> None:
        self.token = token
        self.port = port
        self.logins = logins

    @property
    def allowed_hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}", f"[::1]:{self.port}"})

    def token_ok(self, presented: str | None) -> bool:
        return presented is not None and hmac.compare_digest(
            presented.encode(), self.token.encode()
        )

    def session_ok(self, scope: Scope) -> bool:
        """A browser session cookie, presented under the web app's path (and only there)."""
        return self.session_of(scope) is not None

    def session_of(self, scope: Scope) -> str | None:
        """The id of the browser session whose cookie came with the request, if it is good."""
        presented = cookie(scope, self.logins.cookie_name)
        return self.logins.session_id(presented, str(scope.get("path", "")))


def header(scope: Scope, name: bytes) -> str | None:
    values = [v for k, v in scope.get("headers", []) if k.lower() == name]
    if len(values) != 1:  # absent, or repeated (ambiguous: refuse to guess)
        return None if not values else "\x00ambiguous"
    return bytes(values[0]).decode("latin-1")


def bearer(scope: Scope) -> str | None:
    value = header(scope, b"authorization")
    if value and value.lower().startswith("bearer "):
        return value[7:].strip()
    return None


def cookie(scope: Scope, name: str) -> str | None:
    raw = header(scope, b"cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:
        return None
    morsel = jar.get(name)
    return morsel.value if morsel else None


class SecurityMiddleware:
    def __init__(self, app: ASGIApp, credentials: Credentials) -> None:
        self.app = app
        self.credentials = credentials

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "http":
            send = _with_security_headers(send)
        host = header(scope, b"host")
        if host not in self.credentials.allowed_hosts:
            await _refuse(scope, send, 403, "Host not allowed")
            return
        origin = header(scope, b"origin")
        path = scope.get("path", "")
        if origin is not None and origin != f"http://{host}" and not _sign_in(scope, origin):
            await _refuse(scope, send, 403, "Origin not allowed")
            return
        if path in PUBLIC_PATHS or self.authenticated(scope):
            await self.app(scope, receive, send)
            return
        await _refuse(
            scope, send, 401, "Authentication required: open the web UI with `openvaala web`"
        )

    def authenticated(self, scope: Scope) -> bool:
        return self.credentials.token_ok(bearer(scope)) or self.credentials.session_ok(scope)


def _sign_in(scope: Scope, origin: str) -> bool:
    """The sign-in file's form: a page opened from a file posts with `Origin: null`. Harmless
    for the rest of the app: `/login` only trades a one-time code, which takes the token to get."""
    return origin == "null" and scope.get("path") == "/login" and scope.get("method") == "POST"


def _with_security_headers(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
        await send(message)

    return wrapped


async def _refuse(scope: Scope, send: Send, status: int, reason: str) -> None:
    body = reason.encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
    ]
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return
    if "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008})
