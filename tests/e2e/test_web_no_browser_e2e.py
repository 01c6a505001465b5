"""`openvaala web` on a machine where no browser can be started (no desktop, over ssh): it says
so and where the sign-in file is, instead of announcing a browser that never opens; where one
starts, it says it opened it (docs/security.md, "The browser"). The real command and daemon."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from tests.support.daemon import Daemon


def web(daemon: Daemon, browser: str, path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in daemon.env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    # PATH holds no console browser (w3m, lynx) for `webbrowser` to fall back on.
    env.update(BROWSER=browser, PATH=str(path))
    return subprocess.run(
        [sys.executable, "-m", "openvaala_server", "web"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_no_browser_to_start_says_where_the_sign_in_file_is(daemon: Daemon, tmp_path: Path) -> None:
    done = web(daemon, "/bin/false %s", tmp_path)
    assert done.returncode == 0, done.stderr
    said = done.stdout.strip()
    assert said.startswith("No browser could be started here: open this file"), said
    sign_in = Path(urlsplit(said.rsplit(" ", 1)[-1]).path)
    assert sign_in.is_file() and sign_in.stat().st_mode & 0o777 == 0o600


def test_a_browser_started_is_said_once(daemon: Daemon, tmp_path: Path) -> None:
    browser = tmp_path / "browser.sh"
    browser.write_text("#!/bin/sh\nexit 0\n")
    browser.chmod(0o755)
    done = web(daemon, f"{browser} %s", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Opened http://{daemon.address}/ in your browser"
