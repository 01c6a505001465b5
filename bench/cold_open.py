"""A cold `conversation/subscribe` of a long conversation, with and without its folded metadata
(issue 40: "cold subscribe of a 50k-item, 10k-turn conversation < 30 ms at low load").

For each size (default 1k / 10k / 50k root items; bench/_history.py's shape, so 200 / 2k / 10k
turns, two metadata records each, with subagents and compactions) a conversation is written into
a fresh data directory. Then, `--runs` times, alternating: a fresh daemon is started on it and a
raw websocket client times its first `conversation/subscribe` (send to parsed answer: the daemon
loads the conversation, folds its metadata, reads its last page), once with
``metadata.folded`` removed first (the whole journal replayed: how every open was before) and
once with it in place (written by the previous open). Median and range, with the load average.

Run: ``python bench/cold_open.py [--sizes 1000,10000,50000] [--runs 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import BenchDaemon, RawClient
from bench._history import write_conversation
from openvaala_server.store.folded import folded_path
from openvaala_server.store.paths import DataDir


async def cold_subscribe(home: Path, cid: str) -> float:
    with BenchDaemon(home=home) as daemon:
        client = await RawClient.connect(daemon.address, daemon.token)
        try:
            started = time.perf_counter()
            await client.request("conversation/subscribe", {"conversationId": cid})
            return (time.perf_counter() - started) * 1000
        finally:
            await client.close()


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):6.1f} ms ({min(values):.1f}–{max(values):.1f})"


async def measure(size: int, runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="ovbench-cold-") as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        cwd.mkdir()
        cid, _ = await write_conversation(home, cwd, size)
        snapshot = folded_path(DataDir(home).metadata_file(cid))
        turns = DataDir(home).metadata_file(cid).read_bytes().count(b'"turn_started"')
        replayed: list[float] = []
        folded: list[float] = []
        loads: list[float] = []
        for _ in range(runs):
            snapshot.unlink(missing_ok=True)
            replayed.append(await cold_subscribe(home, cid))
            if not snapshot.exists():
                await cold_subscribe(home, cid)  # a short history gets none: measured anyway
            folded.append(await cold_subscribe(home, cid))
            loads.append(os.getloadavg()[0])
        print(
            f"{size:>7,} items, {turns:,} turns: cold subscribe, journal replayed "
            f"{spread(replayed)}; from metadata.folded {spread(folded)} "
            f"(snapshot: {snapshot.exists()}); {runs} runs, load {statistics.median(loads):.1f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        asyncio.run(measure(size, args.runs))


if __name__ == "__main__":
    main()
