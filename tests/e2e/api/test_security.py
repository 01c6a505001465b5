"""Who can reach the daemon: token, Host and Origin checks on every route and the websocket."""

from __future__ import annotations

import json
from types import SimpleNamespace

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from openvaala_server.api.web_login import WebLogins
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
        store = SimpleNamespace(data_dir=daemon.data_dir)

    scratch = daemon.home.parent / "routes-enumerated"
    scratch.mkdir(exist_ok=True)
    app = build_app(_Runtime(), Credentials("t", 1, WebLogins.open(scratch)))  # type: ignore[arg-type]
    paths = {getattr(r, "path", "") for r in app.app.routes}  # type: ignore[attr-defined]
    assert {"/", "/healthz", "/ws", "/login", "/login/code", "/login/revoke", "/s/{key}"} <= paths
    app_path = _app_path(daemon)
    probes = paths - {"/s/{key}"} | {app_path, f"{app_path}static/app.css", "/nope"}
    async with httpx.AsyncClient() as http:
        for path in sorted(probes):
            if path == "/ws":
                assert await _ws_status(daemon, {}) == 401
                continue
            response = await http.get(f"http://{daemon.address}{path}")
            expected = 200 if path == "/healthz" else 401
            assert response.status_code == expected, path
            if path == "/login":
                continue  # public, and wants a one-time code even with the token (tested below)
            authed = await http.get(
                f"http://{daemon.address}{path}",
                headers={"Authorization": f"Bearer {daemon.token}"},
            )
            assert authed.status_code != 401, path


def _app_path(daemon: Daemon) -> str:
    data = json.loads((daemon.home / "web-sessions.json").read_text())
    return f"/s/{data['pathKey']}/"


async def _login(http: httpx.AsyncClient, daemon: Daemon) -> httpx.Response:
    code = await http.post(
        f"http://{daemon.address}/login/code",
        headers={"Authorization": f"Bearer {daemon.token}"},
    )
    assert code.status_code == 200
    return await _post_code(http, daemon, code.json()["code"])


async def _post_code(http: httpx.AsyncClient, daemon: Daemon, code: str) -> httpx.Response:
    """What the sign-in file's form does (a page opened from a file posts with `Origin: null`)."""
    return await http.post(
        f"http://{daemon.address}/login", data={"code": code}, headers={"Origin": "null"}
    )


async def test_browser_login_trades_a_one_time_code_for_a_path_bound_cookie(
    daemon: Daemon,
) -> None:
    base = f"http://{daemon.address}"
    async with httpx.AsyncClient() as http:
        # No secret in any URL: the old `/?token=` login is gone; codes come only with the
        # token, and work only posted (a form), never from an address.
        assert (await _post_code(http, daemon, "guess")).status_code == 401
        assert (await http.get(f"{base}/login")).status_code == 401
        assert (await http.post(f"{base}/login/code")).status_code == 401
        code = await http.post(
            f"{base}/login/code", headers={"Authorization": f"Bearer {daemon.token}"}
        )
        assert set(code.json()) == {"code"}
        # `Origin: null` (a page opened from a file) is let through to the sign-in post only.
        null_origin = {"Origin": "null", "Authorization": f"Bearer {daemon.token}"}
        assert (await http.post(f"{base}/login/code", headers=null_origin)).status_code == 403
        assert (await http.get(f"{base}/login/sessions", headers=null_origin)).status_code == 403
        assert (await http.get(f"{base}/login?code={code.json()['code']}")).status_code == 401
        login = await _post_code(http, daemon, code.json()["code"])
        app_path = _app_path(daemon)
        assert login.status_code == 200
        assert f'content="0;url={app_path}"' in login.text  # moves on to the app
        again = await _post_code(http, daemon, code.json()["code"])
        assert again.status_code == 401  # single use
        header = login.headers["set-cookie"]
        assert "HttpOnly" in header and "samesite=strict" in header.lower()
        assert f"Path={app_path}" in header
        assert daemon.token not in header
        name, secret = header.split(";", 1)[0].split("=", 1)
        assert name.startswith("openvaala_") and name != "openvaala_session"

        http.cookies.clear()  # sent by hand below, exactly where each check says
        jar = {"Cookie": f"{name}={secret}"}
        page = await http.get(f"{base}{app_path}", headers=jar)
        assert page.status_code == 200 and "<html" in page.text
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert "access-control-allow-origin" not in page.headers
        assert (await http.get(f"{base}{app_path}static/app.css", headers=jar)).status_code == 200
        # Replayed without the binding: outside the app's path, under another key, or forged.
        assert (await http.get(f"{base}/", headers=jar)).status_code == 401
        assert (await http.get(f"{base}/s/otherkey/", headers=jar)).status_code == 401
        forged = {"Cookie": f"{name}={secret[:-2]}xx"}
        assert (await http.get(f"{base}{app_path}", headers=forged)).status_code == 401
    cookie_header = {"Cookie": f"{name}={secret}"}
    assert await _ws_status(daemon, cookie_header) == 401  # /ws takes the token only
    assert await _ws_app_status(daemon, app_path, cookie_header) == 101
    assert await _ws_app_status(daemon, "/s/otherkey/", cookie_header) == 401
    # The session file keeps no usable secret.
    stored = (daemon.home / "web-sessions.json").read_text()
    assert secret not in stored and daemon.token not in stored
    assert (daemon.home / "web-sessions.json").stat().st_mode & 0o777 == 0o600


async def _ws_app_status(daemon: Daemon, app_path: str, headers: dict[str, str]) -> int:
    uri = f"ws://{daemon.address}{app_path}ws"
    try:
        async with connect(uri, additional_headers=headers, open_timeout=5):
            return 101
    except InvalidStatus as exc:
        return _status(exc)


async def test_sessions_survive_a_restart_and_logout_all_ends_them(daemon: Daemon) -> None:
    async with httpx.AsyncClient() as http:
        login = await _login(http, daemon)
        name, secret = login.headers["set-cookie"].split(";", 1)[0].split("=", 1)
        http.cookies.clear()
        app_path = _app_path(daemon)
        daemon.restart()
        page = await http.get(
            f"http://{daemon.address}{app_path}", headers={"Cookie": f"{name}={secret}"}
        )
        assert page.status_code == 200  # same session, new token, new port

        done = daemon.cli("web", "--logout-all")
        assert done.returncode == 0, done.stderr
        assert "Signed out 1 browser session." in done.stdout
        gone = await http.get(
            f"http://{daemon.address}{app_path}", headers={"Cookie": f"{name}={secret}"}
        )
        assert gone.status_code == 401
        assert _app_path(daemon) != app_path  # the app moved: old addresses lead nowhere
        # Without a daemon running, the CLI revokes in the data directory itself.
        await _login(http, daemon)
        daemon.stop()
        done = daemon.cli("web", "--logout-all")
        assert done.returncode == 0 and "Signed out 1 browser session." in done.stdout


async def test_token_file_is_private(daemon: Daemon) -> None:
    mode = (daemon.home / "token").stat().st_mode & 0o777
    assert mode == 0o600
    assert (daemon.home.stat().st_mode & 0o777) == 0o700
    assert daemon.token not in daemon.log()
