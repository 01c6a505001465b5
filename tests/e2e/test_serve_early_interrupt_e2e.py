"""Ctrl+C in the first fraction of a second of `openvaala serve`, while its modules still load:
the process ends quietly, as an interrupted program (a shell's status 130), not with a
KeyboardInterrupt traceback through whatever import it cut, nor a crash (a KeyboardInterrupt
inside orjson's module init segfaulted). A real process, SIGINT sent as soon as it started.

The command runs with `-S` and the same `sys.path`: the development install's start-up hook
(site's `.pth` finder) is Python's own work and fills the first ~80 ms, before any line of ours
runs; an installed wheel starts without it, as `-S` does here. What Python does before the
program's first line is not ours to change, so an interrupt that lands there (a traceback naming
no module of ours past the entry) is not held against the command.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from tests.support.waits import WAIT_S

ROOT = Path(__file__).resolve().parents[2]
# The files run before `early_interrupt` takes over: an interrupt in them is Python's start-up
# handing over (a signal still pending when the program's first line runs is raised there).
ENTRY = {
    ROOT / "openvaala_server" / name
    for name in ("__init__.py", "__main__.py", "launch.py", "early_interrupt.py")
}


def _interrupted(tmp: Path, delay_s: float) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENVAALA_")}
    paths = sysconfig.get_paths()
    env |= {
        "OPENVAALA_HOME": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),  # no config.toml: the defaults
        "PYTHONPATH": os.pathsep.join([str(ROOT), paths["purelib"], paths["platlib"]]),
    }
    command = [sys.executable, "-S", "-m", "openvaala_server", "serve", "--port", "0"]
    with subprocess.Popen(
        command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    ) as child:  # fmt: skip
        if delay_s:
            time.sleep(delay_s)  # the user's reaction time, not a wait for the process
        child.send_signal(signal.SIGINT)
        try:
            out, err = child.communicate(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            # Killed here, not left to `Popen.__exit__`, which waits without a limit: a lost
            # interrupt held a CI worker for good instead of failing this test.
            child.kill()
            out, err = child.communicate()
            pytest.fail(f"SIGINT after {delay_s} s did not end `serve`:\n{err}")
    return subprocess.CompletedProcess(command, child.returncode, out, err)


def _ours(stderr: str) -> list[str]:
    """The frames of a traceback in our modules (past the entry) or the libraries they load."""
    frames = [Path(f) for f in re.findall(r'File "([^"<]+)"', stderr)]
    site = [Path(sysconfig.get_paths()[name]) for name in ("purelib", "platlib")]
    return [
        str(f)
        for f in frames
        if f not in ENTRY and (f.is_relative_to(ROOT) or any(f.is_relative_to(p) for p in site))
    ]


@pytest.mark.parametrize("delay_s", [0, 0.05, 0.15, 0.3])
def test_ctrl_c_while_serve_starts_ends_it_quietly(tmp_path: Path, delay_s: float) -> None:
    done = _interrupted(tmp_path, delay_s)
    said = done.stderr
    assert done.returncode != -signal.SIGSEGV, said
    assert not _ours(said), said  # no traceback through the program's imports
    if "Traceback" in said:
        return  # Python's own start-up was cut, before the program's first line (see above)
    if done.returncode == 0:
        return  # it was already serving: Ctrl+C stopped the daemon gracefully, as later
    assert done.returncode == -signal.SIGINT, said  # ended by the interrupt: status 130
    assert len(said.splitlines()) <= 1, said
