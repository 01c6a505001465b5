"""The real `openvaala` command in a pseudo-terminal: it starts a daemon, shows the first screen,
quits, and the daemon it started is stopped afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pexpect

from tests.tui.conftest import demo_config


def test_openvaala_opens_the_tui_and_quits(tmp_path: Path) -> None:
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "config.toml"
    # A free port: the default one may be taken by another daemon on this machine.
    config.write_text("[server]\nport = 0\n" + demo_config())
    env = dict(os.environ)
    env.update(
        OPENVAALA_HOME=str(home),
        OPENVAALA_CONFIG=str(config),
        TERM="xterm-256color",
        COLUMNS="100",
        LINES="30",
    )
    stop = [sys.executable, "-m", "openvaala_server", "serve", "stop"]
    child = pexpect.spawn(
        sys.executable,
        ["-m", "openvaala_server", "--cwd", str(work)],
        env=env,
        cwd=str(work),
        dimensions=(30, 100),
        timeout=30,
        encoding="utf-8",
        codec_errors="replace",
    )
    try:
        child.expect("New conversation")
        child.expect("default · demo")  # the status bar, drawn from the first snapshot
        child.sendcontrol("q")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
        subprocess.run(stop, env=env, capture_output=True, timeout=30, check=False)
    assert child.exitstatus == 0, child.before
    status = subprocess.run(
        [sys.executable, "-m", "openvaala_server", "serve", "status"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert status.returncode == 3, status.stdout  # not running any more
