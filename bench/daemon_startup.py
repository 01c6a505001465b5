"""Daemon start-up: from spawning ``python -m openvaala_server serve --port 0`` to its first
``/healthz`` answer, with a temporary data directory and the demo config (no MCP server), and the
import time of ``openvaala_server.server`` alone (``python -X importtime``). Medians of
``--runs`` runs, with the load average (the machine may be shared).

Run: ``python bench/daemon_startup.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import BenchDaemon


def import_ms() -> float:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import openvaala_server.server"],
        capture_output=True,
        text=True,
        check=True,
    )
    last = [line for line in done.stderr.splitlines() if "openvaala_server.server" in line][-1]
    return int(last.split("|")[1]) / 1000


def start_ms() -> float:
    daemon = BenchDaemon()
    try:
        began = time.perf_counter()
        daemon.start()
        return (time.perf_counter() - began) * 1000
    finally:
        daemon.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    starts = [start_ms() for _ in range(args.runs)]
    imports = [import_ms() for _ in range(args.runs)]
    print(f"daemon start-up (load average {os.getloadavg()[0]:.1f}):")
    print(f"  spawn to /healthz          median {statistics.median(starts):6.0f} ms")
    print(f"  import openvaala_server.server  median {statistics.median(imports):6.0f} ms")


if __name__ == "__main__":
    main()
