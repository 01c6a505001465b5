"""`openvaala exec` on the demo model: its overhead over the turn itself (issue 21).

What it measures
    Against one running daemon (bench/_daemon.py, demo model at ``pace_ms``), alternately:
      - exec: the real command, ``python -m openvaala_server exec PROMPT`` (what the
        ``openvaala`` script runs), wall time from spawn to exit, its output discarded;
      - turn: the same prompt through an already connected websocket client, from
        ``conversation/create`` to ``turn/ended``: what exec does minus starting a process,
        importing, connecting and printing.
    overhead = median(exec) − median(turn). For scale, a bare ``python -c pass`` is shown too.
    Also the CPU time the exec process used (user + system): the turn itself waits on the
    daemon and costs exec little CPU, so on a loaded machine this is the figure that says what
    exec's own start-up costs.

Goal: under 0.5 s of overhead.

Run: ``python bench/exec.py [--runs N] [--pace-ms MS]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson

from bench._daemon import BenchDaemon, RawClient

PROMPT = "hello from the benchmark"


def config(pace_ms: int) -> str:
    return f"""
[models.demo]
provider = "demo"
pace_ms = {pace_ms}

[agents.default]
description = "General assistant"
model = "demo"
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(
    command: list[str], env: dict[str, str], cwd: Path, cpu: list[float] | None = None
) -> float:
    """Wall time of running `command`; its CPU time goes to `cpu` when given."""
    used = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr.decode()}")
    if cpu is not None:
        cpu.append(_children_cpu() - used)
    return elapsed


async def one_turn(client: RawClient, cwd: Path) -> float:
    start = time.perf_counter()
    created = await client.request("conversation/create", {"cwd": str(cwd)})
    cid = created["conversation"]["conversationId"]
    await client.request("conversation/subscribe", {"conversationId": cid})
    await client.request("input/send", {"conversationId": cid, "text": PROMPT, "mode": "queue"})
    while True:
        message = orjson.loads(await client.ws.recv())
        if message.get("method") == "turn/ended":
            return time.perf_counter() - start


def line(name: str, values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    return (
        f"  {name:<14} median {statistics.median(ms):7.0f} ms  "
        f"(min {ms[0]:.0f}, max {ms[-1]:.0f}, {len(ms)} runs)"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--pace-ms", type=int, default=10)
    args = parser.parse_args()
    with BenchDaemon(config(args.pace_ms)) as daemon:
        env = dict(daemon.env, PYTHONPATH=os.environ.get("PYTHONPATH", ""))
        client = await RawClient.connect(daemon.address, daemon.token)
        command = [sys.executable, "-m", "openvaala_server", "exec", PROMPT]
        timed(command, env, daemon.workdir)  # warm: page cache, bytecode
        execs: list[float] = []
        turns: list[float] = []
        bare: list[float] = []
        cpu: list[float] = []
        for _ in range(args.runs):
            execs.append(timed(command, env, daemon.workdir, cpu))
            turns.append(await one_turn(client, daemon.workdir))
            bare.append(timed([sys.executable, "-c", "pass"], env, daemon.workdir))
        await client.close()
    overhead = statistics.median(execs) - statistics.median(turns)
    load = os.getloadavg()[0]
    print(f"openvaala exec on the demo model (pace_ms {args.pace_ms}, load average {load:.1f}):")
    print(line("exec", execs))
    print(line("exec CPU", cpu))
    print(line("turn alone", turns))
    print(line("python -c pass", bare))
    print(f"  overhead       {overhead * 1000:7.0f} ms  (goal < 500 ms)")


if __name__ == "__main__":
    asyncio.run(main())
