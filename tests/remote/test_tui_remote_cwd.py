"""`openvaala --remote HOST --cwd DIR`: DIR is a path of HOST (docs/remote.md), so the terminal UI
leaves it to the daemon over there rather than refusing it for not existing on this machine. The
real command in a pseudo-terminal, through a real sshd."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys

import pexpect

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.remote.conftest import assert_no_daemon_here
from tests.support.daemon import Daemon


def test_the_remote_home_as_cwd_is_the_remote_machines(
    client_env: dict[str, str], local: Daemon, fake: FakeProvider
) -> None:
    fake.enqueue(Reply().text("Answered ", "at home."))
    # This machine's HOME has no say: `~` is expanded over there, by the remote daemon.
    env = dict(client_env, HOME=str(local.workdir), TERM="xterm-256color", COLUMNS="100")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "openvaala_server", "--cwd", "~"],
        env=env,
        cwd=str(local.workdir),
        dimensions=(30, 100),
        timeout=60,
        encoding="utf-8",
        codec_errors="replace",
    )
    try:
        seen = child.expect(["Tab queue", "does not exist", pexpect.EOF])  # the composer is up
        assert seen == 0, child.before
        child.send("where am I\r")
        child.expect("at home")
        child.sendcontrol("q")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    listed = subprocess.run(
        [sys.executable, "-m", "openvaala_server", "list", "--json"],
        env=client_env,
        cwd=str(local.workdir),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    remote_home = pwd.getpwuid(os.getuid()).pw_dir  # the sshd session's HOME
    cwds = [c["cwd"] for c in json.loads(listed.stdout) if c["title"] == "where am I"]
    assert cwds == [remote_home]
    assert_no_daemon_here(local)
