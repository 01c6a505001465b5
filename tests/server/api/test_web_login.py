"""Login codes and browser sessions (openvaala_server/api/web_login.py), on a fake clock."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from openvaala_server.api.web_login import CODE_TTL, SESSION_TTL, TOUCH_EVERY, WebLogins


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_code_expires_within_a_minute_and_works_once(tmp_path: Path) -> None:
    clock = Clock()
    logins = WebLogins.open(tmp_path, clock)
    late = logins.new_code()
    clock.now += CODE_TTL + 1
    assert logins.redeem(late) is None
    code = logins.new_code()
    clock.now += CODE_TTL - 1
    secret = logins.redeem(code)
    assert secret is not None
    assert logins.redeem(code) is None
    assert logins.session_ok(secret, logins.app_path)
    assert logins.session_ok(secret, f"{logins.app_path}ws")
    assert not logins.session_ok(secret, "/ws")
    assert not logins.session_ok(secret, "/s/other/")


def test_sessions_are_kept_across_opens_until_they_expire_or_are_revoked(tmp_path: Path) -> None:
    clock = Clock()
    first = WebLogins.open(tmp_path, clock)
    secret = first.redeem(first.new_code())
    again = WebLogins.open(tmp_path, clock)  # a daemon restart
    assert again.app_path == first.app_path and again.cookie_name == first.cookie_name
    assert again.session_ok(secret, again.app_path)
    clock.now += SESSION_TTL + 1
    assert not again.session_ok(secret, again.app_path)
    clock.now -= SESSION_TTL + 1
    old_path = again.app_path
    assert again.revoke_all() == 1
    assert again.app_path != old_path
    assert not WebLogins.open(tmp_path, clock).session_ok(secret, old_path)


def test_a_damaged_file_starts_over(tmp_path: Path) -> None:
    (tmp_path / "web-sessions.json").write_text("{not json")
    logins = WebLogins.open(tmp_path)
    assert logins.app_path.startswith("/s/") and logins.sessions == []


def test_sessions_are_listed_with_their_browser_and_times_and_end_one_by_one(
    tmp_path: Path,
) -> None:
    clock = Clock()
    logins = WebLogins.open(tmp_path, clock)
    first = logins.redeem(logins.new_code(), "FirstBrowser/1.0")
    clock.now += 10
    second = logins.redeem(logins.new_code(), "SecondBrowser/2.0")
    assert first is not None and second is not None
    listed = logins.list_sessions()
    assert [(s["userAgent"], s["created"]) for s in listed] == [
        ("FirstBrowser/1.0", 1_000_000.0),
        ("SecondBrowser/2.0", 1_000_010.0),
    ]
    assert first not in str(listed) and second not in str(listed)  # ids, not secrets
    # Use moves "last used" on (written at most once a minute, and kept over a restart).
    clock.now += TOUCH_EVERY
    assert logins.session_id(first, logins.app_path) == listed[0]["id"]
    again = WebLogins.open(tmp_path, clock)
    assert [s["lastUsed"] for s in again.list_sessions()] == [clock.now, 1_000_010.0]
    # Ending one: its cookie stops working, the other's does not.
    assert again.end(listed[0]["id"])
    assert not again.end(listed[0]["id"])
    assert not again.session_ok(first, again.app_path)
    assert again.session_ok(second, again.app_path)
    assert [s["id"] for s in WebLogins.open(tmp_path, clock).list_sessions()] == [listed[1]["id"]]


def test_a_session_file_of_an_earlier_version_is_read(tmp_path: Path) -> None:
    clock = Clock()
    secret = "s" * 43
    old = {
        "daemonId": "ab12cd34",
        "pathKey": "key",
        "sessions": [{"hash": _hash(secret), "created": clock.now}],
    }
    (tmp_path / "web-sessions.json").write_text(json.dumps(old))
    logins = WebLogins.open(tmp_path, clock)
    assert logins.session_ok(secret, "/s/key/")
    [listed] = logins.list_sessions()
    assert listed["lastUsed"] == clock.now and listed["userAgent"] == ""


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()
