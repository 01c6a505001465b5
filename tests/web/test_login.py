"""`openvaala web` signs the browser in with a one-time code: the master token is on no command
line and in no history; the session survives a daemon restart (docs/security.md)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from playwright.sync_api import Playwright, expect

from tests.support.daemon import Daemon
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, paced

DaemonFactory = Callable[..., Daemon]


def test_openvaala_web_opens_the_browser_with_a_one_time_code(
    daemon_factory: DaemonFactory, playwright_instance: Playwright, tmp_path: Path
) -> None:
    daemon = daemon_factory(paced(0))
    tokens = [daemon.token]
    # The browser `openvaala web` launches: a script that records its command line.
    argv_file = tmp_path / "browser-argv"
    fake_browser = tmp_path / "browser.sh"
    fake_browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$0" "$@" > {argv_file}\n')
    fake_browser.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-m", "openvaala_server", "web"],
        env={**daemon.env, "BROWSER": f"{fake_browser} %s"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    argv = argv_file.read_text()
    assert daemon.token not in argv and daemon.token not in done.stdout
    url = argv.split()[-1]
    assert urlsplit(url).path == "/login" and "code=" in url

    profile = tmp_path / "profile"
    context = playwright_instance.chromium.launch_persistent_context(
        str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS
    )
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("body[data-connection='online']")
        app_path = urlsplit(page.url).path
        assert app_path.startswith("/s/") and "token" not in page.url
        # The code worked once: opening it again (from history, say) signs nobody in.
        assert httpx.get(url, timeout=10).status_code == 401

        # The daemon restarts (new token, here a new port): the browser stays signed in.
        daemon.restart()
        tokens.append(daemon.token)
        page.goto(f"http://{daemon.address}{app_path}")
        page.wait_for_selector("body[data-connection='online']")
        expect(page.locator("#banner")).to_be_hidden()

        # Every session ended: the open tab says it is signed out.
        revoked = daemon.cli("web", "--logout-all")
        assert revoked.returncode == 0, revoked.stderr
        daemon.restart()  # drop the live websocket, so the tab reconnects and asks again
        page.goto(f"http://{daemon.address}{app_path}")
        assert "Authentication required" in page.content()
    finally:
        context.close()
    with sqlite3.connect(profile / "Default" / "History") as db:
        visited = [row[0] for row in db.execute("SELECT url FROM urls")]
    assert visited, "the browser kept no history to check"
    assert not [u for u in visited for t in tokens if t in u], visited
