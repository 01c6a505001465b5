"""`openvaala web`: open the web UI signed in, list and end browser sessions (docs/security.md,
"The browser").

The browser is started on a private sign-in file (`api/login_page.py`), never on an address with
a secret in it: a browser's command line is readable by every local user. With no daemon running,
`--sessions`, `--end` and `--logout-all` read and edit the session file themselves (it is ours
then: no daemon holds it).
"""

from __future__ import annotations

import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import TypeVar, cast

from openvaala_server.api.web_login import SessionInfo, WebLogins
from openvaala_server.client import ensure_server, find_server
from openvaala_server.protocol import codec
from openvaala_server.store.paths import DataDir

T = TypeVar("T")
MIN_PREFIX = 4  # of a browser session's 12-character id


def _err(message: str) -> None:
    print(f"openvaala: {message}", file=sys.stderr)


def open_web() -> int:
    """Sign the browser in with a one-time code it reads from a private file."""
    from openvaala_server.api.login_page import open_in_browser, write_page
    from openvaala_server.client.remote import configured

    remote = configured()
    if remote is not None:
        from openvaala_server.remote.web import open_web as open_remote_web

        return open_remote_web(remote)

    try:
        address, token = ensure_server()
        code = str(request_json(address, token, "POST", "/login/code")["code"])
        page = write_page(DataDir.resolve().root, f"http://{address}", code)
    except (RuntimeError, OSError, ValueError, KeyError) as exc:
        _err(f"could not sign the browser in: {exc}")
        return 1
    open_in_browser(page, f"http://{address}/")
    return 0


def logout_all() -> int:
    revoked = _ask(
        lambda found: int(str(request_json(*found, "POST", "/login/revoke")["revoked"])),
        WebLogins.revoke_all,
        "sign the browsers out",
    )
    if revoked is None:
        return 1
    print(f"Signed out {revoked} browser session{'s' if revoked != 1 else ''}.")
    return 0


def _sessions_online(found: tuple[str, str]) -> list[SessionInfo]:
    return cast(list[SessionInfo], request_json(*found, "GET", "/login/sessions")["sessions"])


def list_sessions() -> int:
    sessions = _ask(_sessions_online, WebLogins.list_sessions, "read the browser sessions")
    if sessions is None:
        return 1
    if not sessions:
        print("No browser is signed in.")
        return 0
    print(f"{'ID':<14}{'SIGNED IN':<18}{'LAST USED':<18}BROWSER")
    for s in sessions:
        print(f"{s['id']:<14}{_when(s['created']):<18}{_when(s['lastUsed']):<18}{s['userAgent']}")
    print("End one with `openvaala web --end ID`.")
    return 0


def end_session(typed: str) -> int:
    """`--end ID`: ID, or a prefix of it that names one session, as with conversation ids."""
    sessions = _ask(_sessions_online, WebLogins.list_sessions, "read the browser sessions")
    if sessions is None:
        return 1
    prefix = typed.strip().lower()
    # At least MIN_PREFIX characters: one typed by mistake must not end some other session.
    found = sorted(
        {s["id"] for s in sessions if len(prefix) >= MIN_PREFIX and s["id"].startswith(prefix)}
    )
    if len(found) > 1:
        _err(f"browser session id {typed} is ambiguous: {', '.join(found)}; type more characters")
        return 2
    return _end(found[0] if found else typed)


def _end(session_id: str) -> int:
    def online(found: tuple[str, str]) -> bool:
        try:
            request_json(*found, "POST", f"/login/sessions/{session_id}/end")
        except LookupError:
            return False
        return True

    ended = _ask(online, lambda logins: logins.end(session_id), "end the browser session")
    if ended is None:
        return 1
    if not ended:
        _err(f"no browser session {session_id} (`openvaala web --sessions` lists them)")
        return 1
    print(f"Ended browser session {session_id}.")
    return 0


def _ask(
    online: Callable[[tuple[str, str]], T], offline: Callable[[WebLogins], T], doing: str
) -> T | None:
    """Ask the running daemon, or, with none running, do it on the session file (then ours).
    None, said on stderr, when it failed."""
    found = find_server()
    try:
        if found is not None:
            return online(found)
        return offline(WebLogins.open(DataDir.resolve().root))
    except (OSError, ValueError, KeyError) as exc:
        _err(f"could not {doing}: {exc}")
        return None


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def request_json(address: str, token: str, method: str, path: str) -> dict[str, object]:
    """A token request to the daemon; LookupError for a 404 (no such session)."""
    request = urllib.request.Request(
        f"http://{address}{urllib.parse.quote(path)}",
        method=method,
        data=b"" if method == "POST" else None,
        headers={"Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = codec.parse_text(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise LookupError(path) from exc
        raise
    if not isinstance(answer, dict):
        raise ValueError(f"unexpected answer from the daemon to {path}")
    return answer
