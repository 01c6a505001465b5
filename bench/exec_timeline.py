"""`openvaala exec "hello"` with no daemon running, as a time line: when each step happened and
how much CPU each of the two processes (exec, and the daemon it starts) had used by then.

What it records
    Both processes run with a ``sitecustomize`` module of this bench on their ``PYTHONPATH``
    (the daemon inherits exec's environment). It writes one line per step, with the wall clock
    (``time.time()``: both processes on one clock) and the process's CPU time so far:

    - exec: its start, the spawn of the daemon, its imports of ``openvaala_server.exec`` and of
      the websockets client, each connection it opens (the first is ``GET /ready`` when it had to
      wait for the daemon's address, else the websocket), its first and last write to stdout
      (the answer), and its exit (its atexit, or its ``os._exit``); then, seen by this bench,
      ``process ended``: when the process was gone (after the interpreter's teardown, if it ran
      one), with the whole process's CPU (user + system);
    - the daemon: its start, the bind of its socket, ``serving`` (the lock names its address:
      ``/healthz`` answers), ``ready`` (the runtime built: ``/ws`` served), its exit.

    Each run uses a new data directory and the demo model at zero pacing; the daemon is stopped
    after each run. Printed: the median of each step over the runs, in ms since exec's start,
    with the CPU figures, and the load average.

Run: ``python bench/exec_timeline.py [--runs N]`` (byte-compile first, as bench/daemon_startup.py
does, or the compiler is measured; it does that itself).
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._daemon import DEMO_CONFIG  # noqa: E402

# Loaded by both interpreters at start (site.py imports `sitecustomize` when it is on the path).
SITECUSTOMIZE = r'''
import os, sys, time
_path = os.environ.get("OPENVAALA_BENCH_TIMELINE")
if _path:
    _role = "daemon" if "serve" in sys.argv else "exec"
    _events = []
    _once = set()

    def _mark(what, once=True):
        if once and what in _once:
            return
        _once.add(what)
        _events.append((time.time(), what, time.process_time()))

    _mark("start")
    _connects = [0]

    def _hook(event, args):
        if event == "socket.bind":
            _mark("bind")
        elif event == "socket.connect":
            _connects[0] += 1
            _mark(f"connection {_connects[0]}")
        elif event == "subprocess.Popen":
            _mark("spawn")
        elif event == "import" and args[0] in (
            "openvaala_server.exec", "websockets.asyncio.client", "openvaala_server.server"
        ):
            _mark(f"import {args[0]}")

    sys.addaudithook(_hook)

    if _role == "exec":
        class _Out:
            """stdout, noting the first and the last write (the answer)."""
            def __init__(self, out):
                self._out = out
            def write(self, text):
                _mark("first output")
                _events.append((time.time(), "last output", time.process_time()))
                return self._out.write(text)
            def __getattr__(self, name):
                return getattr(self._out, name)
        sys.stdout = _Out(sys.stdout)
    else:
        import logging

        class _Steps(logging.Handler):
            def emit(self, record):
                message = record.getMessage()
                if message.startswith("OpenVaala serving"):
                    _mark("serving")
                elif message == "OpenVaala ready":
                    _mark("ready")
        logging.getLogger("openvaala.server").addHandler(_Steps())

    import atexit

    def _dump():
        _mark("exit")
        last = [e for e in _events if e[1] == "last output"][-1:]
        rows = [e for e in _events if e[1] != "last output"] + last
        with open(_path, "a") as f:
            for t, what, cpu in rows:
                f.write(f"{t:.6f}\t{_role}\t{what}\t{cpu * 1000:.1f}\n")
    atexit.register(_dump)
    # exec ends with os._exit once its answer is written (no atexit): dumped there too.
    _exit = os._exit

    def _exit_now(code):
        _dump()
        _exit(code)

    os._exit = _exit_now
'''


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(python: str, hooks: Path) -> list[tuple[float, str, str, float]]:
    """One cold exec: (wall, role, step, CPU ms) per step, the wall in ms since exec's start."""
    with tempfile.TemporaryDirectory(prefix="ovbench-timeline-") as tmp:
        root = Path(tmp)
        config = root / "config.toml"
        config.write_text(DEMO_CONFIG + "\n[server]\nport = 0\n")
        work = root / "work"
        work.mkdir()
        log = root / "timeline.tsv"
        env = dict(
            os.environ,
            OPENVAALA_HOME=str(root / "home"),
            OPENVAALA_CONFIG=str(config),
            PYTHONPATH=f"{os.environ.get('PYTHONPATH') or ROOT}:{hooks}",
            OPENVAALA_BENCH_TIMELINE=str(log),
        )
        try:
            used = _children_cpu()
            done = subprocess.run(
                [python, "-m", "openvaala_server", "exec", "hello"],
                env=env,
                cwd=work,
                capture_output=True,
                check=False,
            )
            # The end as a script waiting for exec sees it: after the interpreter's teardown,
            # if it has one (the `exit` step is its atexit or its os._exit).
            ended = (time.time(), (_children_cpu() - used) * 1000)
            if done.returncode != 0:
                sys.exit(f"exec failed ({done.returncode}): {done.stderr.decode()[-500:]}")
        finally:
            del env["OPENVAALA_BENCH_TIMELINE"]
            # The daemon writes its steps when it exits: stopped (and waited for) here.
            subprocess.run(
                [python, "-m", "openvaala_server", "serve", "stop"],
                env=env,
                capture_output=True,
                check=False,
            )
        # `serve stop` returns once the lock is free; the daemon writes its steps at its exit,
        # just after: read once they are there (or the temporary directory's removal races it).
        deadline = time.monotonic() + 10
        while "\tdaemon\texit\t" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.01)
        rows = [line.split("\t") for line in log.read_text().splitlines()]
        rows.append([f"{ended[0]:.6f}", "exec", "process ended", f"{ended[1]:.1f}"])
    began = min(float(t) for t, role, what, _ in rows if role == "exec" and what == "start")
    return [((float(t) - began) * 1000, role, what, float(cpu)) for t, role, what, cpu in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for package in ("openvaala_server", "openvaala_web"):
        compileall.compile_dir(ROOT / package, quiet=1)
    steps: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="ovbench-hooks-") as hooks:
        (Path(hooks) / "sitecustomize.py").write_text(SITECUSTOMIZE)
        for _ in range(args.runs):
            for wall, role, what, cpu in one_run(sys.executable, Path(hooks)):
                steps[(role, what)].append((wall, cpu))
    load = max(load, os.getloadavg()[0])
    print(f"openvaala exec with no daemon, step by step ({args.runs} runs, load up to {load:.1f})")
    print("  median ms since exec's start (range) | that process's CPU ms by then (median)")
    order = sorted(steps.items(), key=lambda kv: statistics.median(w for w, _ in kv[1]))
    for (role, what), values in order:
        walls = [w for w, _ in values]
        cpu = statistics.median(c for _, c in values)
        name = f"{role}: {what}"
        print(
            f"  {name:<46} {statistics.median(walls):7.0f} ({min(walls):.0f}–{max(walls):.0f})"
            f"  | CPU {cpu:5.0f}"
        )


if __name__ == "__main__":
    main()
