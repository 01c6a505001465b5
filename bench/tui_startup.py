"""TUI start-up: from running `openvaala` to its first drawn screen (issue 21).

What it measures
    The real command (``python -m openvaala_server --cwd DIR``, what the ``openvaala`` script
    runs) in a pseudo-terminal of 100×30, with a temporary ``OPENVAALA_HOME`` and a config on the
    demo model (``[server] port = 0``). Two moments, from the spawn:
      - first frame: the terminal shows the footer ("Interrupt"): the app is drawn;
      - first screen: the welcome ("Type a message"): the conversation is open, which is what
        a user waits for.
    Two cases: a daemon already running (started once before, warm), and none (each run stops
    it first, so `openvaala` starts one: ``serve start`` in a subprocess, waiting for its lock).
    Ctrl+Q quits after each run. Figures are the median and the spread of ``--runs`` runs.

    ``--calls``: instead, the number of Python function calls (cProfile) from the start of the
    command to its first screen (the welcome drawn), with a daemon running. Unlike the clock it
    hardly depends on the machine's load: the figure to compare two versions of the code with.
    The bench's own harness imports the app first to know when the screen is up; run it with
    ``PYTHONPATH`` pointing at another checkout to count that one.

Goal: under 0.5 s with a daemon running, under 1.2 s with none.

Run: ``python bench/tui_startup.py [--runs N] [--warm-only | --calls]`` (also
``python bench/tui.py --startup``).
"""

from __future__ import annotations

import argparse
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect

CONFIG = """
[server]
port = 0

[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
"""


# Run in the pseudo-terminal by `--calls`: profile the real command until the welcome is drawn.
PROFILED = """
import cProfile, sys
profiler = cProfile.Profile()
profiler.enable()
import openvaala_tui.app as tui_app
from openvaala_server.cli import main
shown = tui_app.VaalaApp.show_welcome
def show_welcome(self):
    shown(self)
    def drawn():
        profiler.disable()
        profiler.dump_stats(sys.argv[1])
        self.exit()
    self.call_after_refresh(drawn)
tui_app.VaalaApp.show_welcome = show_welcome
main(sys.argv[2:])
"""


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        OPENVAALA_HOME=str(root / "home"),
        OPENVAALA_CONFIG=str(root / "config.toml"),
        TERM="xterm-256color",
        COLUMNS="100",
        LINES="30",
    )
    # A user's install caches bytecode; a shell that turned that off would time the compiler.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _serve(action: str, env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "openvaala_server", "serve", action],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )


def _cpu_s(pid: int) -> float:
    """CPU time (user + system) the process has used so far: on a loaded machine the wall
    clock mostly measures the wait for a core, this what start-up itself costs."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(root: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """(first frame, first screen, CPU time to the first screen) in seconds from the spawn."""
    start = time.perf_counter()
    child = pexpect.spawn(
        sys.executable,
        ["-m", "openvaala_server", "--cwd", str(root / "work")],
        env=env,
        cwd=str(root / "work"),
        dimensions=(30, 100),
        timeout=60,
        encoding="utf-8",
        codec_errors="replace",
    )
    seen = ""
    frame = screen = cpu = 0.0
    try:
        while not screen:  # both may come in one write: look at everything read so far
            seen += child.read_nonblocking(65536, timeout=60)
            now = time.perf_counter() - start
            if not frame and "Interrupt" in seen:
                frame = now
            if "Type a message" in seen:
                screen = now
                assert child.pid is not None
                cpu = _cpu_s(child.pid)
                frame = frame or now
        child.sendcontrol("q")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    return frame, screen, cpu


def count_calls(root: Path, env: dict[str, str]) -> int:
    """Python function calls from the command's start to its first screen (see --calls)."""
    stats = root / "calls.prof"
    child = pexpect.spawn(
        sys.executable,
        ["-c", PROFILED, str(stats), "--cwd", str(root / "work")],
        env=env,
        cwd=str(root / "work"),
        dimensions=(30, 100),
        timeout=60,
    )
    try:
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    total: int = pstats.Stats(str(stats)).total_calls  # type: ignore[attr-defined]
    return total


def report(name: str, runs: list[tuple[float, float, float]]) -> None:
    for index, label in ((0, "first frame"), (1, "first screen"), (2, "CPU to screen")):
        values = sorted(r[index] * 1000 for r in runs)
        print(
            f"  {name:<18} {label:<13} median {statistics.median(values):6.0f} ms"
            f"  (min {values[0]:.0f}, max {values[-1]:.0f}, {len(values)} runs)"
        )


def main(runs: int = 5, warm_only: bool = False, calls: bool = False) -> None:
    with tempfile.TemporaryDirectory(prefix="ov-tui-startup-") as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        (root / "config.toml").write_text(CONFIG)
        env = _env(root)
        try:
            cold = []
            for _ in range(0 if warm_only else runs):
                _serve("stop", env)
                cold.append(one_run(root, env))
            _serve("start", env)
            one_run(root, env)  # the first conversation and imports in the daemon: not counted
            if calls:
                counts = sorted(count_calls(root, env) for _ in range(runs))
                print("openvaala to its first screen, daemon running: Python function calls")
                print(
                    f"  median {statistics.median(counts):,.0f}  (min {counts[0]:,}, "
                    f"max {counts[-1]:,}, {len(counts)} runs)"
                )
                return
            warm = [one_run(root, env) for _ in range(runs)]
        finally:
            _serve("stop", env)
    print("openvaala to its first drawn screen (100x30 pty, demo model):")
    report("daemon running", warm)
    if cold:
        report("no daemon", cold)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warm-only", action="store_true", help="only with a daemon running")
    parser.add_argument(
        "--calls", action="store_true", help="count function calls to the first screen instead"
    )
    args = parser.parse_args()
    main(args.runs, args.warm_only or args.calls, args.calls)
