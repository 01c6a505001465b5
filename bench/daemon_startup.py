"""Daemon start-up: from spawning ``python -m openvaala_server serve --port 0`` to its first
``/healthz`` answer, with a temporary data directory and the demo config (no MCP server), and the
import time of ``openvaala_server.server`` alone (``python -X importtime``). Medians of
``--runs`` runs, with the load average (the machine may be shared).

With ``--conversations N`` the data directory first gets N small conversations (bench/_history.py,
10 items each, written once and kept for every run): a start must not grow with their number
(issue 40: "healthy < 0.35 s with 50k conversations").

Run: ``python bench/daemon_startup.py [--runs N] [--conversations N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import BenchDaemon
from bench._history import write_many


def import_ms() -> float:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import openvaala_server.server"],
        capture_output=True,
        text=True,
        check=True,
    )
    last = [line for line in done.stderr.splitlines() if "openvaala_server.server" in line][-1]
    return int(last.split("|")[1]) / 1000


def start_ms(home: Path | None = None) -> float:
    daemon = BenchDaemon(home=home)
    try:
        began = time.perf_counter()
        daemon.start()
        return (time.perf_counter() - began) * 1000
    finally:
        daemon.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--conversations", type=int, default=0)
    args = parser.parse_args()
    home: Path | None = None
    if args.conversations:
        home = Path(tempfile.mkdtemp(prefix="ovbench-startup-"))
        began = time.perf_counter()
        asyncio.run(write_many(home / "home", home, args.conversations, 10))
        home = home / "home"
        print(
            f"{args.conversations:,} conversations written in {time.perf_counter() - began:.0f} s"
        )
        start_ms(home)  # the first start after writing: the index is checked, pages cached
    starts = [start_ms(home) for _ in range(args.runs)]
    imports = [import_ms() for _ in range(args.runs)]
    if home is not None:
        shutil.rmtree(home.parent, ignore_errors=True)
    print(f"daemon start-up (load average {os.getloadavg()[0]:.1f}):")
    print(
        f"  spawn to /healthz ({args.conversations:,} conversations)  median "
        f"{statistics.median(starts):6.0f} ms ({min(starts):.0f}–{max(starts):.0f})"
    )
    print(f"  import openvaala_server.server  median {statistics.median(imports):6.0f} ms")


if __name__ == "__main__":
    main()
