"""Browser sign-in without the master token (docs/security.md, "The browser").

`openvaala web` asks the daemon (with the token, over HTTP) for a one-time login code: random,
single use, valid for CODE_TTL seconds, kept only in memory. The browser is opened at
`/login?code=…`; the daemon trades the code for a session and answers with a cookie and a
redirect to the app, which lives under a path of its own, `/s/<pathKey>/`.

Why the path: a browser sends a 127.0.0.1 cookie to every port on 127.0.0.1, so a cookie scoped to
`/` reached any local web server the user visits, which could replay it. The session cookie is
scoped to the app's path (a random key of this data directory) and named after this daemon, so the
browser sends it only to URLs under that path, and the daemon accepts it only there: a cookie
replayed anywhere else, or after `openvaala web --logout-all` (which ends every session and draws a
new path key), is refused.

Sessions are kept (hashed) in `web-sessions.json` in the data directory, mode 0600, so they
survive a daemon restart; the token does not (it is new at every start).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

CODE_TTL = 60.0
SESSION_TTL = 30 * 24 * 3600.0
FILE_NAME = "web-sessions.json"
MAX_CODES = 32  # outstanding codes; older ones are dropped (each is useless after a minute)


class _SessionRecord(TypedDict):
    hash: str
    created: float


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

    @classmethod
    def open(cls, data_root: Path, clock: Callable[[], float] = time.time) -> WebLogins:
        logins = cls(data_root / FILE_NAME, clock)
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

    def redeem(self, code: str) -> str | None:
        """A new session's secret for a valid code (which is used up), else None."""
        expiry = self.codes.pop(_digest(code), None)
        if expiry is None or expiry <= self.clock():
            return None
        secret = secrets.token_urlsafe(32)
        self._prune()
        self.sessions.append({"hash": _digest(secret), "created": self.clock()})
        self._save()
        return secret

    # -- sessions -------------------------------------------------------------------------

    def session_ok(self, secret: str | None, path: str) -> bool:
        if not secret or not self.in_app(path):
            return False
        digest = _digest(secret)
        oldest = self.clock() - SESSION_TTL
        found = False
        for record in self.sessions:  # every record compared: no early exit to time
            if hmac.compare_digest(record["hash"], digest) and record["created"] > oldest:
                found = True
        return found

    def revoke_all(self) -> int:
        """End every session and move the app to a new path. Returns how many ended."""
        count = len(self.sessions)
        self.sessions = []
        self.codes = {}
        self.path_key = secrets.token_urlsafe(18)
        self._save()
        return count

    # -- the file -------------------------------------------------------------------------

    def _prune(self) -> None:
        oldest = self.clock() - SESSION_TTL
        self.sessions = [s for s in self.sessions if s["created"] > oldest]

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text())
            self.daemon_id = str(data["daemonId"])
            self.path_key = str(data["pathKey"])
            self.sessions = [
                {"hash": str(s["hash"]), "created": float(s["created"])} for s in data["sessions"]
            ]
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
            os.write(fd, json.dumps(data).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)


def _url_safe(text: str) -> bool:
    return bool(text) and all(c.isalnum() or c in "-_" for c in text)
