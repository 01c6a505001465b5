"""Browser sessions end after `[server] web_session_idle_hours` unused (web_login.py, on a fake
clock), and the key is read and checked like every other."""

from __future__ import annotations

from pathlib import Path

import pytest

from openvaala_server.api.web_login import TOUCH_EVERY, WebLogins
from openvaala_server.config import ConfigError, load_config
from tests.server.api.test_web_login import Clock

HOUR = 3600.0


def _session(logins: WebLogins) -> str:
    secret = logins.redeem(logins.new_code())
    assert secret is not None
    return secret


def test_a_session_unused_past_the_idle_limit_ends_and_a_used_one_lives_on(
    tmp_path: Path,
) -> None:
    clock = Clock()
    logins = WebLogins.open(tmp_path, clock, idle_ttl=2 * HOUR)
    used, idle = _session(logins), _session(logins)
    app = logins.app_path
    for _ in range(4):  # 4 hours of use, every half hour
        clock.now += HOUR / 2
        assert logins.session_ok(used, app)
    assert not logins.session_ok(idle, app)
    assert len(logins.list_sessions()) == 1
    # Read again at the next start: the idle one stays gone, the used one is kept.
    again = WebLogins.open(tmp_path, clock, idle_ttl=2 * HOUR)
    assert again.session_ok(used, app)
    # Without a limit only the 30 days count.
    no_limit = WebLogins.open(tmp_path, clock)
    clock.now += 10 * HOUR + TOUCH_EVERY
    assert no_limit.session_ok(used, app)


def test_the_idle_setting_is_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[server]\nweb_session_idle_hours = 12\n")
    assert load_config(path).server.web_session_idle_hours == 12
    path.write_text("[server]\nweb_session_idle_hours = -1\n")
    with pytest.raises(ConfigError, match="web_session_idle_hours"):
        load_config(path)
    path.write_text("[server]\nweb_session_idle_hour = 12\n")
    with pytest.raises(ConfigError, match="web_session_idle_hour"):
        load_config(path)


def test_work_over_an_open_websocket_is_use_and_an_idle_tab_s_next_request_is_refused(
    tmp_path: Path,
) -> None:
    """A tab works over its one websocket for hours without an HTTP request (api/app.py asks
    `in_use` before each request on it): it is not signed out while used, and a tab left idle
    past the limit is, at its next request."""
    clock = Clock()
    logins = WebLogins.open(tmp_path, clock, idle_ttl=2 * HOUR)
    working, idle = _session(logins), _session(logins)
    app = logins.app_path
    working_id, idle_id = logins.session_id(working, app), logins.session_id(idle, app)
    assert working_id and idle_id
    for _ in range(8):  # 4 hours of requests on its websocket, every half hour
        clock.now += HOUR / 2
        assert logins.in_use(working_id)
    assert not logins.in_use(idle_id)
    # A reload (an HTTP request with the cookie) still finds the working one signed in.
    assert logins.session_ok(working, app)
    assert not logins.session_ok(idle, app)
