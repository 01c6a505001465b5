"""A user whose shell sets a proxy (`http_proxy`, `https_proxy`, `all_proxy`, as corporate
machines do) still reaches the local daemon: the client library connects to loopback directly,
never through the proxy (websockets' client follows those variables unless told not to). Model
providers are another matter: their HTTP client keeps honouring the proxy (real network)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.daemon import Daemon

# A proxy nobody listens on: going through it fails at once ("Connect call failed ... 9").
DEAD_PROXY = "http://127.0.0.1:9"


def test_exec_reaches_the_daemon_with_a_proxy_in_the_environment(daemon: Daemon) -> None:
    env = dict(daemon.env)
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        env[name] = env[name.upper()] = DEAD_PROXY
    env.pop("no_proxy", None)
    env.pop("NO_PROXY", None)
    done = subprocess.run(
        [sys.executable, "-m", "openvaala_server", "exec", "hello through no proxy"],
        env=env,
        cwd=daemon.workdir,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "hello through no proxy" in done.stdout
