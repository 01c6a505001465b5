"""Login codes and browser sessions (openvaala_server/api/web_login.py), on a fake clock."""

from __future__ import annotations

from pathlib import Path

from openvaala_server.api.web_login import CODE_TTL, SESSION_TTL, WebLogins


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
