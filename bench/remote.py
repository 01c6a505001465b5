"""`--remote` against a direct connection: request round trip and chunk-to-client latency.

What it measures
    One real daemon (its own process, temp data directory, demo model), a real OpenSSH server on
    a loopback port (tests/support/sshd.py: throwaway keys, the daemon's data directory given to
    the ssh sessions), and two clients of the client library: one connected directly (TCP to
    127.0.0.1), one through `--remote` (ssh → `openvaala bridge` → the daemon). SSH's own set-up
    happens before anything is timed.

    Round trip: `conversation/usage` from each client, interleaved, so both see the same load.
    Chunk to client: both clients subscribe to one conversation; the demo model streams replies;
    the daemon stamps each event as the hub numbers it (`perf_counter`, one clock for every
    process) and each client stamps it on arrival. Printed: p50 / p95 per case and the p50 added
    by `--remote` (goal: under 1 ms on loopback SSH).

Run: ``python bench/remote.py [--rounds N] [--turns N]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._daemon import BenchDaemon, percentile
from openvaala_server.client import Client
from openvaala_server.client.remote import ENV_SSH, parse
from tests.support.sshd import remote_path, running_sshd

PACED = """
[models.demo]
provider = "demo"
pace_ms = 2
context_window = 1000000
max_output_tokens = 8000

[agents.default]
description = "General assistant"
model = "demo"
"""


def _row(case: str, values: list[float]) -> float:
    values.sort()
    p50 = percentile(values, 0.5)
    print(f"{case:<34} {p50 * 1000:8.3f} {percentile(values, 0.95) * 1000:8.3f} {len(values):6}")
    return p50


async def _arrivals(client: Client, cid: str, into: dict[int, float], turns: int) -> None:
    ended = 0
    async for note in client.notifications():
        params: Mapping[str, object] = note["params"]
        if params.get("conversationId") == cid and isinstance(params.get("seq"), int):
            into[int(str(params["seq"]))] = time.perf_counter()
        if note["method"] == "turn/ended":
            ended += 1
            if ended == turns:
                return


async def run(daemon: BenchDaemon, rounds: int, turns: int) -> None:
    direct = await Client.connect(daemon.address, daemon.token, client_name="bench-direct")
    remote = await Client.connect(client_name="bench-remote", remote=parse("remotebox"))
    trips: dict[str, list[float]] = {"direct": [], "--remote": []}
    created = await direct.request("conversation/create", {"cwd": str(daemon.workdir)})
    cid = created["conversation"]["conversationId"]
    for _ in range(rounds):
        for name, client in (("direct", direct), ("--remote", remote)):
            start = time.perf_counter()
            await client.request("conversation/usage", {"conversationId": cid})
            trips[name].append(time.perf_counter() - start)
    await direct.subscribe(cid)
    await remote.subscribe(cid)
    seen: dict[str, dict[int, float]] = {"direct": {}, "--remote": {}}
    readers = [
        asyncio.create_task(_arrivals(direct, cid, seen["direct"], turns)),
        asyncio.create_task(_arrivals(remote, cid, seen["--remote"], turns)),
    ]
    for i in range(turns):
        text = f"write a long answer, turn {i} " + "lorem ipsum " * 40
        await direct.request("input/send", {"conversationId": cid, "text": text, "mode": "queue"})
    await asyncio.wait_for(asyncio.gather(*readers), 300)
    await direct.close()
    await remote.close()
    daemon.stop()
    emitted = {seq: after for conv, seq, _before, after in daemon.emits() if conv == cid}
    print(f"{'case':<34} {'p50 ms':>8} {'p95 ms':>8} {'n':>6}")
    trip = {name: _row(f"round trip, {name}", values) for name, values in trips.items()}
    chunk = {
        name: _row(
            f"event to client, {name}",
            [t - emitted[seq] for seq, t in arrivals.items() if seq in emitted],
        )
        for name, arrivals in seen.items()
    }
    for what, p50 in (("round trip", trip), ("event to client", chunk)):
        added = (p50["--remote"] - p50["direct"]) * 1000
        print(f"{what}: --remote adds {added:.3f} ms at p50 (goal: under 1 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--turns", type=int, default=5)
    args = parser.parse_args()
    with BenchDaemon(PACED, emit_log=True) as daemon, tempfile.TemporaryDirectory() as tmp:
        remote_env = {
            "OPENVAALA_HOME": str(daemon.home),
            "OPENVAALA_CONFIG": str(daemon.config_path),
            "PATH": remote_path(),
        }
        with running_sshd(Path(tmp) / "sshd", remote_env) as sshd:
            os.environ[ENV_SSH] = sshd.ssh_command
            asyncio.run(run(daemon, args.rounds, args.turns))


if __name__ == "__main__":
    main()
