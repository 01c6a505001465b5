"""`openvaala exec` with no daemon begins its start before anything else it does — before it
reads its prompt from stdin and before its own imports — so the two overlap (docs/design.md,
"Serving before the runtime is built")."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

from openvaala_server.daemon_spawn import running_address
from tests.support.daemon import Daemon

WAIT_S = 60.0


def test_exec_starts_the_daemon_while_it_still_reads_its_prompt(
    daemon_factory: Callable[..., Daemon],
) -> None:
    d = daemon_factory(start=False)
    execution = subprocess.Popen(
        [sys.executable, "-m", "openvaala_server", "exec", "-"],
        env=d.env,
        cwd=d.workdir,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        # The prompt is not written yet: exec is still reading stdin, and the daemon serves.
        deadline = time.monotonic() + WAIT_S
        while running_address(d.home) is None:
            assert execution.poll() is None, execution.communicate()
            assert time.monotonic() < deadline, "no daemon started while exec read its prompt"
            time.sleep(0.05)
        out, err = execution.communicate(b"hello from stdin", timeout=WAIT_S)
    finally:
        if execution.poll() is None:
            execution.kill()
            execution.communicate()
    assert execution.returncode == 0, err.decode()
    assert out.strip(), err.decode()  # the demo model's answer
