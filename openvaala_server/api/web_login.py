"""Browser sign-in without the master token (docs/security.md, "The browser").

`openvaala web` asks the daemon (with the token, over HTTP) for a one-time login code: random,
single use, valid for CODE_TTL seconds, kept only in memory. The code travels to the browser in a
private file (`login_page.py`) whose form posts it to `/login`; the daemon trades it for a session
and answers with a cookie and a page that moves on to the app, which lives under a path of its
own, `/s/<pathKey>/`.

Why the path: a browser sends a 127.0.0.1 cookie to every port on 127.0.0.1, so a cookie scoped to
`/` reached any local web server the user visits, which could replay it. The session cookie is
scoped to the app's path (a random key of this data directory) and named after this daemon, so the
browser sends it only to URLs under that path, and the daemon accepts it only there: a cookie
replayed anywhere else, or after `openvaala web --logout-all` (which ends every session and draws a
new path key), is refused.

Sessions are kept (hashed) in `web-sessions.json` in the data directory, mode 0600, so they
survive a daemon restart; the token does not (it is new at every start). Each has a public id
(not its secret), its creation time, when it was last used and the browser's user agent, so
`openvaala web --sessions` and the web app can list them, and end any one.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from openvaala_server.protocol import codec

CODE_TTL = 60.0
SESSION_TTL = 30 * 24 * 3600.0
FILE_NAME = "web-sessions.json"
MAX_CODES = 32  # outstanding codes; older ones are dropped (each is useless after a minute)
# "Last used" is written to the file at most this often per session: a request does not cost a
# file write, and a listing is at most this far behind.
TOUCH_EVERY = 60.0
MAX_USER_AGENT = 300  # characters kept of a browser's User-Agent header


class _SessionRecord(TypedDict):
    id: str  # public handle (listing, ending); not the secret
    hash: str  # SHA-256 of the cookie's secret
    created: float
    lastUsed: float
    userAgent: str


class SessionInfo(TypedDict):
    """One browser session as `openvaala web --sessions` and the web app list it."""

    id: str
    created: float
    lastUsed: float
    userAgent: str


class _FileShape(TypedDict):
    daemonId: str
    pathKey: str
    sessions: list[_SessionRecord]


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass
class WebLogins:
    """The login codes in flight and the browser sessions of one data directory."""

    path: Path
    clock: Callable[[], float] = time.time
    daemon_id: str = ""
    path_key: str = ""
    sessions: list[_SessionRecord] = field(default_factory=list)
    codes: dict[str, float] = field(default_factory=dict)  # digest -> expiry
    # A session unused this long (seconds) is ended; 0: only SESSION_TTL ends it. From
    # `[server] web_session_idle_hours` (docs/configuration.md).
    idle_ttl: float = 0.0

    @classmethod
    def open(
        cls, data_root: Path, clock: Callable[[], float] = time.time, idle_ttl: float = 0.0
    ) -> WebLogins:
        logins = cls(data_root / FILE_NAME, clock, idle_ttl=idle_ttl)
        logins._load()
        return logins

    # -- the app's place ------------------------------------------------------------------

    @property
    def app_path(self) -> str:
        """Where the web app is served, with the trailing slash: `/s/<pathKey>/`."""
        return f"/s/{self.path_key}/"

    @property
    def cookie_name(self) -> str:
        return f"openvaala_{self.daemon_id}"

    def in_app(self, path: str) -> bool:
        return path.startswith(self.app_path) or path == self.app_path[:-1]

    # -- codes ----------------------------------------------------------------------------

    def new_code(self) -> str:
        now = self.clock()
        self.codes = {d: t for d, t in self.codes.items() if t > now}
        while len(self.codes) >= MAX_CODES:
            self.codes.pop(next(iter(self.codes)))
        code = secrets.token_urlsafe(24)
        self.codes[_digest(code)] = now + CODE_TTL
        return code

    def redeem(self, code: str, user_agent: str = "") -> str | None:
        """A new session's secret for a valid code (which is used up), else None."""
        expiry = self.codes.pop(_digest(code), None)
        now = self.clock()
        if expiry is None or expiry <= now:
            return None
        secret = secrets.token_urlsafe(32)
        self._prune()
        self.sessions.append(
            {
                "id": secrets.token_hex(6),
                "hash": _digest(secret),
                "created": now,
                "lastUsed": now,
                "userAgent": user_agent[:MAX_USER_AGENT],
            }
        )
        self._save()
        return secret

    # -- sessions -------------------------------------------------------------------------

    def session_ok(self, secret: str | None, path: str) -> bool:
        return self.session_id(secret, path) is not None

    def session_id(self, secret: str | None, path: str) -> str | None:
        """The id of the live session whose secret this is, presented under the app's path (and
        only there), else None. Marks the session used."""
        if not secret or not self.in_app(path):
            return None
        digest = _digest(secret)
        now = self.clock()
        found: _SessionRecord | None = None
        for record in self.sessions:  # every record compared: no early exit to time
            if hmac.compare_digest(record["hash"], digest) and self._live(record, now):
                found = record
        if found is None:
            return None
        self._touch(found, now)
        return found["id"]

    def in_use(self, session_id: str) -> bool:
        """A request on a websocket this session opened: whether the session is still live,
        marking it used. A tab works over one websocket for hours without an HTTP request, and
        that is use too (`[server] web_session_idle_hours` counts inactivity)."""
        now = self.clock()
        for record in self.sessions:
            if record["id"] == session_id and self._live(record, now):
                self._touch(record, now)
                return True
        return False

    def _touch(self, record: _SessionRecord, now: float) -> None:
        if now - record["lastUsed"] >= TOUCH_EVERY:
            record["lastUsed"] = now
            # Bookkeeping: a full disk must not refuse a good cookie (it is kept in memory).
            with contextlib.suppress(OSError):
                self._save()

    def list_sessions(self) -> list[SessionInfo]:
        """The live sessions, oldest first."""
        self._prune()
        return [
            {
                "id": s["id"],
                "created": s["created"],
                "lastUsed": s["lastUsed"],
                "userAgent": s["userAgent"],
            }
            for s in sorted(self.sessions, key=lambda s: s["created"])
        ]

    def end(self, session_id: str) -> bool:
        """End one session (its cookie is refused from now on); whether there was one."""
        kept = [s for s in self.sessions if s["id"] != session_id]
        if len(kept) == len(self.sessions):
            return False
        self.sessions = kept
        self._save()
        return True

    def revoke_all(self) -> int:
        """End every session and move the app to a new path. Returns how many ended."""
        count = len(self.sessions)
        self.sessions = []
        self.codes = {}
        self.path_key = secrets.token_urlsafe(18)
        self._save()
        return count

    # -- the file -------------------------------------------------------------------------

    def _live(self, record: _SessionRecord, now: float) -> bool:
        """Signed in less than SESSION_TTL ago, and used within `idle_ttl` (when set)."""
        if record["created"] <= now - SESSION_TTL:
            return False
        return not self.idle_ttl or record["lastUsed"] > now - self.idle_ttl

    def _prune(self) -> None:
        now = self.clock()
        self.sessions = [s for s in self.sessions if self._live(s, now)]

    def _load(self) -> None:
        try:
            data = codec.parse_text(self.path.read_text())
            self.daemon_id = str(data["daemonId"])
            self.path_key = str(data["pathKey"])
            self.sessions = [_record(s) for s in data["sessions"]]
        except FileNotFoundError:
            self._fresh()
        except (ValueError, KeyError, TypeError, OSError):
            # Unreadable: start over (everyone signs in again) rather than refuse to serve.
            self._fresh()
        if not (self.daemon_id.isalnum() and _url_safe(self.path_key)):
            self._fresh()

    def _fresh(self) -> None:
        self.daemon_id = secrets.token_hex(4)
        self.path_key = secrets.token_urlsafe(18)
        self.sessions = []
        self._save()

    def _save(self) -> None:
        data: _FileShape = {
            "daemonId": self.daemon_id,
            "pathKey": self.path_key,
            "sessions": self.sessions,
        }
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, codec.text(data, ascii=True).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)


def _record(data: dict[str, object]) -> _SessionRecord:
    """A stored session; one written before sessions had ids and times of use gets them."""
    digest = str(data["hash"])
    created = float(str(data["created"]))
    return {
        "id": str(data.get("id") or digest[:12]),
        "hash": digest,
        "created": created,
        "lastUsed": float(str(data.get("lastUsed", created))),
        "userAgent": str(data.get("userAgent", "")),
    }


def _url_safe(text: str) -> bool:
    return bool(text) and all(c.isalnum() or c in "-_" for c in text)
