"""`openvaala exec` with no daemon starts one itself (docs/design.md, "Exec starts the daemon
itself"); when that daemon cannot start, exec says why with what this start wrote, not with the
older lines of the data directory's log."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.client import daemon as client_daemon
from openvaala_server.client.daemon import ensure_server, start_server_early
from openvaala_server.exec import EXIT_NO_DAEMON
from tests.support.daemon import DEFAULT_CONFIG, Daemon


def test_a_daemon_that_cannot_start_is_explained_by_this_start_alone(daemon_factory: Any) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        d: Daemon = daemon_factory(DEFAULT_CONFIG + f"\n[server]\nport = {port}\n", start=False)
        d.home.mkdir(mode=0o700)
        earlier = "".join(f"an earlier run's line {n}\n" for n in range(40))
        (d.home / "server.log").write_text(earlier)
        done = subprocess.run(
            [sys.executable, "-m", "openvaala_server", "exec", "hello"],
            env=d.env,
            cwd=d.workdir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == EXIT_NO_DAEMON, done.stderr
    assert "could not start the OpenVaala server" in done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr  # the reason, from the daemon
    assert "an earlier run's line" not in done.stderr
    assert (d.home / "server.log").read_text().startswith(earlier)  # the log is kept whole


def test_a_data_directory_that_cannot_be_made_is_named_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The terminal UI begins the daemon's start before it loads: a data directory that cannot
    be made must not end it there with a traceback; the connection says what is wrong."""
    (tmp_path / "a-file").write_text("not a directory")
    home = tmp_path / "a-file" / "home"
    monkeypatch.setenv("OPENVAALA_HOME", str(home))
    monkeypatch.setattr(client_daemon, "_early_start", None)
    start_server_early()  # as `openvaala` does before the terminal UI imports its toolkit
    assert client_daemon._early_start is None
    with pytest.raises(
        RuntimeError, match=r"could not start the OpenVaala server.*Not a directory"
    ):
        ensure_server()
    done = subprocess.run(
        [sys.executable, "-m", "openvaala_server", "exec", "hello"],
        env={**os.environ, "OPENVAALA_HOME": str(home)},
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == EXIT_NO_DAEMON
    assert "Not a directory" in done.stderr and "Traceback" not in done.stderr
