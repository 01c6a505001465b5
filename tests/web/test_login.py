"""`openvaala web` signs the browser in with a one-time code it reads from a private file: neither
the master token nor the code is on any command line or in the history; the session survives a
daemon restart (docs/security.md, "The browser")."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Playwright, expect

from tests.support.daemon import Daemon
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, paced

DaemonFactory = Callable[..., Daemon]


def test_openvaala_web_opens_the_browser_on_a_private_sign_in_file(
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
    url = argv.split()[-1]
    # The command line names a file, and only the user can read it (or list its directory).
    assert urlsplit(url).scheme == "file" and "code" not in url
    sign_in = Path(urlsplit(url).path)
    assert sign_in.stat().st_mode & 0o777 == 0o600
    assert sign_in.parent.stat().st_mode & 0o777 == 0o700
    code = re.search(r'name="code" value="([^"]+)"', sign_in.read_text())
    assert code is not None
    assert code[1] not in argv and code[1] not in done.stdout + done.stderr
    assert daemon.token not in argv + sign_in.read_text() + done.stdout

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
        # The code worked once: the file opened again (from history, say) signs nobody in.
        page.goto(url)
        expect(page.locator("body")).to_contain_text("already used")

        # The daemon restarts (new token, here a new port): the browser stays signed in.
        daemon.restart()
        tokens.append(daemon.token)
        page.goto(f"http://{daemon.address}{app_path}")
        page.wait_for_selector("body[data-connection='online']")
        expect(page.locator("#banner")).to_be_hidden()

        # Every session ended: the open tab says it is signed out.
        revoked = daemon.cli("web", "--logout-all")
        assert revoked.returncode == 0, revoked.stderr
        page.wait_for_selector("body[data-connection='unauthorized']")
        page.goto(f"http://{daemon.address}{app_path}")
        assert "Authentication required" in page.content()
    finally:
        context.close()
    with sqlite3.connect(profile / "Default" / "History") as db:
        visited = [row[0] for row in db.execute("SELECT url FROM urls")]
    assert visited, "the browser kept no history to check"
    secrets = [*tokens, code[1]]
    assert not [u for u in visited for t in secrets if t in u], visited
