"""Storage through the real daemon: conversations appending at once, over the websocket.

What it measures
    A real daemon (bench/_daemon.py: its own process, temp OPENVAALA_HOME, demo model with
    ``pace_ms = 0``). C clients (C = 1, then 8; real websockets in this process) each create a
    conversation, subscribe to it and run turns back to back (``input/send``, wait for
    ``turn/ended``). Every turn makes the daemon append its records durably (``turn_started``,
    the user message, the agent's reply, ``turn_ended``: journal fsync, then the index behind it).

    - records/s: the records the daemon made durable in those conversations (lines of their
      journals, counted after the round) over the round's wall time;
    - daemon CPU per record (``/proc/PID/stat`` utime + stime over the round): less moved by the
      machine's load than the rate;
    - turn latency p50/p99 (``input/send`` → ``turn/ended``);
    - then every client searches (``conversation/list`` with a word only its last reply holds):
      the index has every acknowledged record, and the time that takes.

    Each setting runs ``--rounds`` times (default 3) and prints every round and the spread.
    The issue's storage figures at the store's own API (no websocket, no turn machinery) come
    from bench/append.py; this script shows what a user of the daemon gets.

Run: ``python bench/store_daemon.py [--turns 40] [--rounds 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import BenchDaemon, RawClient, percentile

# A reply of a few words per turn: the demo model echoes "think: …" as reasoning, so plain text
# keeps the turn to its records and the items' text to a short message.
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


async def wait_turn(client: RawClient) -> None:
    while True:
        frame = await client.ws.recv()
        if '"turn/ended"' in str(frame):
            return


async def conversation(
    client: RawClient, cwd: str, turns: int, tag: str
) -> tuple[str, list[float]]:
    created = await client.request("conversation/create", {"cwd": cwd})
    cid = str(created["conversation"]["conversationId"])
    await client.request("conversation/subscribe", {"conversationId": cid})
    latencies = []
    for n in range(turns):
        start = time.perf_counter()
        text = f"note {n} of {tag}: w{tag}x{n}"
        await client.send("input/send", {"conversationId": cid, "text": text, "mode": "queue"})
        await wait_turn(client)
        latencies.append(time.perf_counter() - start)
    return cid, latencies


def records_of(daemon: BenchDaemon, cids: list[str]) -> int:
    total = 0
    for cid in cids:
        directory = daemon.home / "conversations" / cid
        for path in directory.glob("*.jsonl"):
            total += path.read_bytes().count(b"\n")
    return total


async def one_round(daemon: BenchDaemon, clients: int, turns: int, label: str) -> dict[str, float]:
    assert daemon.process is not None
    conns = [await RawClient.connect(daemon.address, daemon.token) for _ in range(clients)]
    try:
        cpu0, t0 = cpu_seconds(daemon.process.pid), time.perf_counter()
        results = await asyncio.gather(
            *(
                conversation(c, str(daemon.workdir), turns, f"{label}c{i}")
                for i, c in enumerate(conns)
            )
        )
        elapsed = time.perf_counter() - t0
        cpu = cpu_seconds(daemon.process.pid) - cpu0
        cids = [cid for cid, _ in results]
        records = records_of(daemon, cids)
        latencies = sorted(x for _, lat in results for x in lat)
        # Every acknowledged turn is searchable: the last reply's own word, in each conversation.
        t1 = time.perf_counter()
        for i, (cid, _) in enumerate(results):
            word = f"w{label}c{i}x{turns - 1}"
            listed = await conns[i].request("conversation/list", {"search": word, "limit": 5})
            found = [s["conversationId"] for s in listed["conversations"]]
            if found != [cid]:
                raise RuntimeError(f"search for {word} found {found}, expected {cid}")
        searched = time.perf_counter() - t1
    finally:
        for c in conns:
            await c.close()
    return {
        "rate": records / elapsed,
        "cpu_us": cpu / records * 1e6,
        "p50": percentile(latencies, 0.5) * 1e3,
        "p99": percentile(latencies, 0.99) * 1e3,
        "search": searched / clients * 1e3,
    }


def spread(values: list[float], fmt: str) -> str:
    return f"median {statistics.median(values):{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--turns", type=int, default=40, help="turns per conversation")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with BenchDaemon() as daemon:
        for clients in (1, 8):
            rounds = []
            for r in range(args.rounds):
                result = await one_round(daemon, clients, args.turns, f"r{r}n{clients}")
                rounds.append(result)
                print(
                    f"{clients} conversation(s), round {r + 1}: {result['rate']:7,.0f} records/s, "
                    f"daemon CPU {result['cpu_us']:5.0f} µs/record, turn p50 "
                    f"{result['p50']:6.2f} ms p99 {result['p99']:6.2f} ms, "
                    f"search {result['search']:5.2f} ms",
                    flush=True,
                )
            print(
                f"{clients} conversation(s) at once through the daemon: records/s "
                f"{spread([x['rate'] for x in rounds], ',.0f')}; CPU µs/record "
                f"{spread([x['cpu_us'] for x in rounds], '.0f')}; every acknowledged record "
                "found by search"
            )


if __name__ == "__main__":
    asyncio.run(main())
