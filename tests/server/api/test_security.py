"""Who can reach the daemon: token, Host and Origin checks on every route and the websocket."""

from __future__ import annotations

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.support.daemon import Daemon


def _status(exc: InvalidStatus) -> int:
    return exc.response.status_code


async def _ws_status(daemon: Daemon, headers: dict[str, str], host: str | None = None) -> int:
    uri = f"ws://{host or daemon.address}/ws"
    try:
        async with connect(uri, additional_headers=headers, open_timeout=5):
            return 101
    except InvalidStatus as exc:
        return _status(exc)


async def test_websocket_needs_the_token(daemon: Daemon) -> None:
    assert await _ws_status(daemon, {}) == 401
    assert await _ws_status(daemon, {"Authorization": "Bearer wrong"}) == 401
    assert await _ws_status(daemon, {"Authorization": f"Bearer {daemon.token}"}) == 101


@pytest.mark.parametrize(
    "origin",
    ["null", "http://evil.example", "http://127.0.0.1:1", "http://127.0.0.1.evil.example"],
)
async def test_foreign_origins_are_refused(daemon: Daemon, origin: str) -> None:
    headers = {"Authorization": f"Bearer {daemon.token}", "Origin": origin}
    assert await _ws_status(daemon, headers) == 403


async def test_own_origin_is_accepted(daemon: Daemon) -> None:
    headers = {"Authorization": f"Bearer {daemon.token}", "Origin": f"http://{daemon.address}"}
    assert await _ws_status(daemon, headers) == 101


async def test_bad_host_is_refused_even_with_the_token(daemon: Daemon) -> None:
    async with httpx.AsyncClient() as http:
        for host in (
            "evil.example",
            f"evil.example:{daemon.port}",
            "127.0.0.1",
            f"127.0.0.2:{daemon.port}",
        ):
            response = await http.get(
                f"http://{daemon.address}/",
                headers={"Host": host, "Authorization": f"Bearer {daemon.token}"},
            )
            assert response.status_code == 403, host
        ok = await http.get(
            f"http://{daemon.address}/healthz", headers={"Host": f"localhost:{daemon.port}"}
        )
        assert ok.status_code == 200


async def test_every_route_needs_the_token_but_healthz(daemon: Daemon) -> None:
    from openvaala_server.api.app import build_app
    from openvaala_server.api.security import Credentials

    # Enumerate the app's real routes, so a route added later cannot slip past this test.
    class _Runtime:
        config = None

    app = build_app(_Runtime(), Credentials("t", "c", 1))  # type: ignore[arg-type]
    paths = {getattr(r, "path", "") for r in app.app.routes}  # type: ignore[attr-defined]
    assert {"/", "/healthz", "/ws"} <= paths
    async with httpx.AsyncClient() as http:
        for path in sorted(paths | {"/static/app.js", "/nope"}):
            if path == "/ws":
                assert await _ws_status(daemon, {}) == 401
                continue
            response = await http.get(f"http://{daemon.address}{path}")
            expected = 200 if path == "/healthz" else 401
            assert response.status_code == expected, path
            authed = await http.get(
                f"http://{daemon.address}{path}",
                headers={"Authorization": f"Bearer {daemon.token}"},
            )
            assert authed.status_code != 401, path


async def test_browser_login_trades_the_token_for_a_cookie(daemon: Daemon) -> None:
    async with httpx.AsyncClient() as http:
        bad = await http.get(f"http://{daemon.address}/?token=wrong")
        assert bad.status_code == 401
        login = await http.get(f"http://{daemon.address}/?token={daemon.token}")
        assert login.status_code == 303 and login.headers["location"] == "/"
        cookie = login.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        assert daemon.token not in cookie
        page = await http.get(f"http://{daemon.address}/")
        assert page.status_code == 200
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert "access-control-allow-origin" not in page.headers


async def test_token_file_is_private(daemon: Daemon) -> None:
    mode = (daemon.home / "token").stat().st_mode & 0o777
    assert mode == 0o600
    assert (daemon.home.stat().st_mode & 0o777) == 0o700
    assert daemon.token not in daemon.log()
