"""`openvaala exec` with no daemon starts one itself (docs/design.md, "Exec starts the daemon
itself"); when that daemon cannot start, exec says why with what this start wrote, not with the
older lines of the data directory's log."""

from __future__ import annotations

import socket
import subprocess
import sys
from typing import Any

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
