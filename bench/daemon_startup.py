"""Daemon start-up: from spawning ``python -m openvaala_server serve --port 0`` to its first
``/healthz`` answer and to its readiness (``GET /ready`` answered: the runtime built,
docs/protocol.md; a daemon older than that answers ``/healthz`` only once ready), with a
temporary data directory and the demo config (no MCP server), and the import time of
``openvaala_server.server`` alone (``python -X importtime``). Medians of ``--runs`` runs, with
the load average (the machine may be shared).

With ``--conversations N`` the data directory first gets N small conversations (bench/_history.py,
10 items each, written once and kept for every run): a start must not grow with their number
(issue 40: "healthy < 0.35 s with 50k conversations").

Also (issue 40, "Start like the fastest peer"): the daemon's own CPU time (user + system, from
/proc) when it first answers and when it is ready — on a loaded machine the figure that says
what a start costs — and
``openvaala exec`` with no daemon running on the demo model: spawn to exit, the daemon it starts
included (started by exec itself; by an intermediate ``serve start`` before
issue 40's last steps), each run on a new empty data directory.

The project's packages are byte-compiled first (``compileall``): an installed package carries its
bytecode, while a checkout run with ``PYTHONDONTWRITEBYTECODE`` would compile every module at
every start and measure the compiler.

Run: ``python bench/daemon_startup.py [--runs N] [--conversations N [--keep DIR]]``.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import DEMO_CONFIG, BenchDaemon
from bench._history import write_many
from openvaala_server.discovery import LOCK_FILE, read_lock


def import_ms() -> float:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import openvaala_server.server"],
        capture_output=True,
        text=True,
        check=True,
    )
    last = [line for line in done.stderr.splitlines() if "openvaala_server.server" in line][-1]
    return int(last.split("|")[1]) / 1000


@dataclass
class Start:
    """One start: spawn to the first `/healthz` answer and to `"ready"` (the runtime built), and
    the daemon's CPU at each."""

    answered_ms: float = 0.0
    ready_ms: float = 0.0
    answered_cpu_ms: float = 0.0
    ready_cpu_ms: float = 0.0


def start_once(home: Path | None = None) -> Start:
    daemon = BenchDaemon(home=home)
    start = Start()
    try:
        began = time.perf_counter()

        def answered() -> None:
            start.answered_ms = (time.perf_counter() - began) * 1000
            if daemon.process is not None:
                start.answered_cpu_ms = cpu_ms(daemon.process.pid)

        daemon.start(answered=answered)
        start.ready_ms = (time.perf_counter() - began) * 1000
        if daemon.process is not None:
            start.ready_cpu_ms = cpu_ms(daemon.process.pid)
        return start
    finally:
        daemon.cleanup()


def cpu_ms(pid: int) -> float:
    """User + system time of process `pid` so far (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def children_cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def exec_cold_ms(cpu: list[float] | None = None) -> float:
    """`openvaala exec` with no daemon running on a new data directory, spawn to exit. Into
    `cpu`: the CPU time of every interpreter that took part up to the answer: exec's own, the
    `serve start` it may wait for (both reaped, so counted in RUSAGE_CHILDREN) and the daemon's
    so far (detached, so read from /proc before it is stopped)."""
    # For its config, data directory and work directory; never started itself. The daemon that
    # exec starts takes a free port (another daemon may hold the default one).
    daemon = BenchDaemon(DEMO_CONFIG + "\n[server]\nport = 0\n")
    env = daemon.env
    try:
        before = children_cpu_ms()
        began = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "openvaala_server", "exec", "hello"],
            env=env,
            cwd=daemon.workdir,
            capture_output=True,
            check=False,
        )
        took = (time.perf_counter() - began) * 1000
        if done.returncode != 0:
            sys.exit(f"exec failed ({done.returncode}): {done.stderr.decode()[-500:]}")
        if cpu is not None:
            info = read_lock(daemon.home / LOCK_FILE)
            daemon_cpu = cpu_ms(info.pid) if info is not None and info.pid else 0.0
            cpu.append(children_cpu_ms() - before + daemon_cpu)
        return took
    finally:
        subprocess.run(
            [sys.executable, "-m", "openvaala_server", "serve", "stop"],
            env=env,
            capture_output=True,
            check=False,
        )
        daemon.cleanup()


def compile_packages() -> None:
    root = Path(__file__).resolve().parents[1]
    for package in ("openvaala_server", "openvaala_web"):
        compileall.compile_dir(root / package, quiet=1)


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):6.0f} ms ({min(values):.0f}–{max(values):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--conversations", type=int, default=0)
    parser.add_argument(
        "--keep",
        type=Path,
        help="the parent of the data directory, written once and kept: another tree's bench "
        "(PYTHONPATH) can then start on the same conversations",
    )
    args = parser.parse_args()
    compile_packages()
    home: Path | None = None
    if args.conversations:
        parent = args.keep or Path(tempfile.mkdtemp(prefix="ovbench-startup-"))
        home = parent / "home"
        if not home.exists():
            parent.mkdir(parents=True, exist_ok=True)
            began = time.perf_counter()
            asyncio.run(write_many(home, parent, args.conversations, 10))
            took = time.perf_counter() - began
            print(f"{args.conversations:,} conversations written in {took:.0f} s")
        start_once(home)  # the first start after writing: the index is checked, pages cached
    load = os.getloadavg()[0]
    starts = [start_once(home) for _ in range(args.runs)]
    imports = [import_ms() for _ in range(args.runs)]
    exec_cpu: list[float] = []
    execs = [] if args.conversations else [exec_cold_ms(exec_cpu) for _ in range(args.runs)]
    if home is not None and args.keep is None:
        shutil.rmtree(home.parent, ignore_errors=True)
    load = max(load, os.getloadavg()[0])
    print(f"daemon start-up (load average up to {load:.1f}, {args.runs} runs):")
    size = f"{args.conversations:,} conversations"
    print(f"  spawn to /healthz ({size})  {summary([s.answered_ms for s in starts])}")
    print(f"  daemon CPU at that answer          {summary([s.answered_cpu_ms for s in starts])}")
    print(f"  spawn to ready ({size})     {summary([s.ready_ms for s in starts])}")
    print(f"  daemon CPU when ready              {summary([s.ready_cpu_ms for s in starts])}")
    print(f"  import openvaala_server.server          {summary(imports)}")
    if execs:
        print(f"  exec with no daemon, to its answer      {summary(execs)}")
        print(f"  its CPU (exec, serve start?, daemon)    {summary(exec_cpu)}")


if __name__ == "__main__":
    main()
