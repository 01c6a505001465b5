"""`openvaala web`: open the web UI signed in, list and end browser sessions (docs/security.md,
"The browser").

The browser is started on a private sign-in file (`api/login_page.py`), never on an address with
a secret in it: a browser's command line is readable by every local user. With no daemon running,
`--sessions`, `--end` and `--logout-all` read and edit the session file themselves (it is ours
then: no daemon holds it).
"""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import cast

from openvaala_server.api.web_login import SessionInfo, WebLogins
from openvaala_server.client import ensure_server, find_server
from openvaala_server.store.paths import DataDir


def _err(message: str) -> None:
    print(f"openvaala: {message}", file=sys.stderr)


def open_web() -> int:
    """Sign the browser in with a one-time code it reads from a private file."""
    import webbrowser

    from openvaala_server.api.login_page import write_page

    try:
        address, token = ensure_server()
        code = str(request_json(address, token, "POST", "/login/code")["code"])
        page = write_page(DataDir.resolve().root, f"http://{address}", code)
    except (RuntimeError, OSError, ValueError, KeyError) as exc:
        _err(f"could not sign the browser in: {exc}")
        return 1
    print(f"Opening http://{address}/ in your browser")
    if not webbrowser.open(page.as_uri()):
        print(f"Open this file in your browser within a minute (it works once): {page.as_uri()}")
    return 0


def logout_all() -> int:
    found = find_server()
    try:
        if found is not None:
            revoked = int(str(request_json(*found, "POST", "/login/revoke")["revoked"]))
        else:
            revoked = _offline().revoke_all()
    except (OSError, ValueError, KeyError) as exc:
        _err(f"could not sign the browsers out: {exc}")
        return 1
    print(f"Signed out {revoked} browser session{'s' if revoked != 1 else ''}.")
    return 0


def list_sessions() -> int:
    found = find_server()
    try:
        if found is not None:
            answer = request_json(*found, "GET", "/login/sessions")["sessions"]
            sessions = cast(list[SessionInfo], answer)
        else:
            sessions = _offline().list_sessions()
    except (OSError, ValueError, KeyError) as exc:
        _err(f"could not read the browser sessions: {exc}")
        return 1
    if not sessions:
        print("No browser is signed in.")
        return 0
    print(f"{'ID':<14}{'SIGNED IN':<18}{'LAST USED':<18}BROWSER")
    for s in sessions:
        print(f"{s['id']:<14}{_when(s['created']):<18}{_when(s['lastUsed']):<18}{s['userAgent']}")
    print("End one with `openvaala web --end ID`.")
    return 0


def end_session(session_id: str) -> int:
    found = find_server()
    try:
        if found is not None:
            request_json(*found, "POST", f"/login/sessions/{session_id}/end")
        elif not _offline().end(session_id):
            raise LookupError
    except LookupError:
        _err(f"no browser session {session_id} (`openvaala web --sessions` lists them)")
        return 1
    except (OSError, ValueError, KeyError) as exc:
        _err(f"could not end the browser session: {exc}")
        return 1
    print(f"Ended browser session {session_id}.")
    return 0


def _offline() -> WebLogins:
    return WebLogins.open(DataDir.resolve().root)


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
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise LookupError(path) from exc
        raise
    if not isinstance(answer, dict):
        raise ValueError(f"unexpected answer from the daemon to {path}")
    return answer
