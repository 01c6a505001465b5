"""Where the memory of one subscribed conversation goes (issue 40, "Open sessions that stay light").

One conversation of `--size` items is written by bench/_history.py (turns, tool calls,
reasoning, subagents, compactions) and subscribed on a real daemon twice: once plain, for its
resident memory (VmRSS) before and after the subscribe, and once under `tracemalloc`, for the
growth of the Python heap over the subscribe by file and line (the daemon dumps its heap at
SIGUSR2: bench/_daemon.py, `heap_log`). Both after `--settle` seconds, so what the open
started in the background (the history's load, the warm-up, the estimates) has run.

Run: ``python bench/memory_breakdown.py [--size 10000] [--top 25]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import BenchDaemon, RawClient
from bench._history import write_conversation
from bench.memory import rss_mb


async def _heap(daemon: BenchDaemon, client: RawClient, n: int) -> list[tuple[str, int, int]]:
    """The daemon's `n`th heap dump (where, bytes, blocks), asked for by SIGUSR2."""
    assert daemon.process is not None and daemon.heap_log_path is not None
    daemon.process.send_signal(signal.SIGUSR2)
    path = Path(f"{daemon.heap_log_path}.{n}")
    while not await asyncio.to_thread(path.exists):
        await client.request("conversation/list", {})
        await asyncio.sleep(0.05)
    rows = json.loads(await asyncio.to_thread(path.read_text))
    return [(str(w), int(size), int(count)) for w, size, count in rows]


async def _subscribed(
    daemon: BenchDaemon, cid: str, settle: float
) -> tuple[float, float, list[tuple[str, int, int]]]:
    """RSS before and after subscribing `cid`, once the background work has had `settle` s;
    with `heap_log`, the heap's growth by line meanwhile."""
    assert daemon.process is not None
    pid = daemon.process.pid
    traced = daemon.heap_log_path is not None
    client = await RawClient.connect(daemon.address, daemon.token)
    try:
        await asyncio.sleep(settle)
        first = await _heap(daemon, client, 1) if traced else []
        before = rss_mb(pid)
        await client.request("conversation/subscribe", {"conversationId": cid})
        deadline = time.monotonic() + settle * 3
        while time.monotonic() < deadline:
            await client.request("conversation/list", {})
            await asyncio.sleep(0.05)
        after = rss_mb(pid)
        if not traced:
            return before, after, []
        held = {w: (size, count) for w, size, count in await _heap(daemon, client, 2)}
        for where, size, count in first:
            now_size, now_count = held.get(where, (0, 0))
            held[where] = (now_size - size, now_count - count)
        return before, after, [(w, size, count) for w, (size, count) in held.items()]
    finally:
        await client.close()


def _report(rows: list[tuple[str, int, int]], top: int) -> None:
    total = sum(size for _, size, _ in rows)
    blocks = sum(n for *_, n in rows)
    print(f"Python heap grown by the subscribe: {total / 2**20:.1f} MB in {blocks:,} blocks")
    by_file: Counter[str] = Counter()
    for where, size, _ in rows:
        by_file[where.rsplit(":", 1)[0]] += size
    print("\nby file:")
    for name, size in by_file.most_common(top):
        print(f"  {size / 2**20:7.2f} MB  {name}")
    print("\nby line:")
    for where, size, count in sorted(rows, key=lambda row: -row[1])[:top]:
        print(f"  {size / 2**20:7.2f} MB  {count:8,} blocks  {where}")


async def main_async(size: int, settle: float, top: int) -> None:
    with tempfile.TemporaryDirectory(prefix="ovbench-breakdown-") as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        cwd.mkdir()
        cid, _ = await write_conversation(home, cwd, size)
        with BenchDaemon(home=home) as daemon:
            before, after, _ = await _subscribed(daemon, cid, settle)
        print(
            f"{size:,} items subscribed: RSS {before:.1f} → {after:.1f} MB (+{after - before:.1f})"
        )
        with BenchDaemon(home=home, heap_log=True) as daemon:
            *_, rows = await _subscribed(daemon, cid, settle)
        _report(rows, top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--settle", type=float, default=1.0)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    asyncio.run(main_async(args.size, args.settle, args.top))


if __name__ == "__main__":
    main()
