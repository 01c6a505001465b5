"""Reindex and listing benchmark on a generated corpus.

Measures:
1. the raw limit: read every journal file and parse every line with orjson (no index), MB/s;
2. `reindex` of the same corpus (read + repair, fold, rows, texts and FTS loaded on a second
   thread, one transaction), MB/s and the ratio to (1): 5 alternating rounds, the median ratio;
   with each round the CPU time of all the process's threads (the two threads overlap only on
   a free core: CPU above the time means they did) and the load average;
3. listing out of 10,000 conversations (a separate corpus of small conversations): one page of
   50 (mean of 20), and all of them in pages of 500 (best of 5) — as the daemon sends them
   (`Store.list_summaries`: each summary the JSON text SQLite stored) and as Python dicts
   (`Store.list_conversations`: the same, parsed).

4. with ``--rss 50000x10,1x50000``: instead of the above, the peak RSS and time of the real
   ``openvaala reindex`` command (``python -m openvaala_server reindex``, a process of its own,
   its peak read from ``wait4``) over data directories of that many conversations × root items
   — the memory a reindex needs must not grow with the data directory nor with one long
   conversation (goal < 100 MB for 50k small ones and for one of 50k items).
   Each size runs ``--rounds`` times.

Corpus (bench/_history.py: turns, tool calls, subagents, compactions, as the daemon writes them):
default 2,000 conversations × 200 items (--small: 200 × 50; listing uses 1,000).
Run: ``python bench/reindex.py [--small] [--rounds N] [--dir PATH] [--rss SIZES]``
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
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._history import write_conversation, write_many
from openvaala_server.store.paths import DataDir
from openvaala_server.store.reindex import reindex
from openvaala_server.store.store import Store


async def generate(data_dir: DataDir, conversations: int, items: int) -> int:
    """`conversations` conversations of `items` root items each, written by bench/_history.py
    (one of them when `conversations` is 1); the bytes of their journals."""
    cwd = data_dir.root.parent
    if conversations == 1:
        await write_conversation(data_dir.root, cwd, items)
    else:
        await write_many(data_dir.root, cwd, conversations, items)
    data_dir.metadata_db.unlink()  # what reindex measures is a rebuild from the journals
    return sum(
        f.stat().st_size for f in data_dir.conversations_dir.glob("*/*.jsonl") if f.is_file()
    )


def raw_read(data_dir: DataDir) -> tuple[int, float]:
    t = time.perf_counter()
    size = 0
    for entry in os.scandir(data_dir.conversations_dir):
        for f in os.scandir(entry.path):
            with open(f.path, "rb") as fh:
                data = fh.read()
            size += len(data)
            for line in data.splitlines():
                orjson.loads(line)
    return size, time.perf_counter() - t


Lister = Callable[..., Awaitable[tuple[list[Any], str | None]]]


async def list_all(page: Lister, count: int) -> float:
    """Seconds to list every conversation in pages of 500 with `page`."""
    t = time.perf_counter()
    seen, cursor = 0, None
    while True:
        rows, cursor = await page(limit=500, cursor=cursor)
        seen += len(rows)
        if cursor is None:
            break
    assert seen == count
    return time.perf_counter() - t


async def listing(directory: Path, count: int) -> None:
    data_dir = DataDir(directory / "listing")
    await generate(data_dir, count, 2)
    await reindex(data_dir)
    store = await Store.open(data_dir)
    try:
        t = time.perf_counter()
        for _ in range(20):
            await store.list_conversations(limit=50)
        one = (time.perf_counter() - t) / 20
        # Best of 5: the figure is a few tens of ms, easily doubled by a busy neighbour.
        everything = as_dicts = float("inf")
        for _ in range(5):
            everything = min(everything, await list_all(store.list_summaries, count))
            as_dicts = min(as_dicts, await list_all(store.list_conversations, count))
        t = time.perf_counter()
        found, _ = await store.list_conversations(search="question", limit=50)
        search = time.perf_counter() - t
        print(f"list 50 of {count:,}:           {one * 1e3:8.2f} ms")
        print(f"list all {count:,} (pages of 500): {everything * 1e3:8.1f} ms (as sent: JSON text)")
        print(f"  the same as Python dicts:     {as_dicts * 1e3:8.1f} ms")
        print(f"search a page of 50:           {search * 1e3:8.2f} ms ({len(found)} found)")
    finally:
        await store.close()


BENCH_DIR = Path(__file__).resolve().parent


def cli_reindex(home: Path) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of `openvaala reindex` over `home`, in its own process."""
    env = dict(os.environ, OPENVAALA_HOME=str(home))
    t = time.perf_counter()
    # Its report goes to /dev/null; an error goes to this terminal.
    proc = subprocess.Popen(
        [sys.executable, "-m", "openvaala_server", "reindex"], env=env, stdout=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    elapsed = time.perf_counter() - t
    if status != 0:
        sys.exit(f"openvaala reindex failed (wait status {status})")
    return elapsed, usage.ru_maxrss / 1024  # Linux reports KiB


async def rss(directory: Path, shapes: list[tuple[int, int]], rounds: int) -> None:
    for conversations, items in shapes:
        data_dir = DataDir(directory / f"rss-{conversations}x{items}")
        t = time.perf_counter()
        total = await generate(data_dir, conversations, items)
        print(
            f"{conversations:,} conversations × {items:,} items, {total / 1e6:.0f} MB "
            f"(generated in {time.perf_counter() - t:.0f} s)",
            flush=True,
        )
        runs = [cli_reindex(data_dir.root) for _ in range(rounds)]
        peaks = [peak for _, peak in runs]
        times = [seconds for seconds, _ in runs]
        print(
            f"  openvaala reindex: peak RSS {statistics.median(peaks):.0f} MB "
            f"({min(peaks):.0f}–{max(peaks):.0f}), {statistics.median(times):.1f} s "
            f"({min(times):.1f}–{max(times):.1f}) over {rounds} runs, "
            f"load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        shutil.rmtree(data_dir.root, ignore_errors=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--rounds", type=int, default=5, help="raw/reindex pairs (median kept)")
    parser.add_argument("--dir", type=Path, default=BENCH_DIR)
    parser.add_argument(
        "--rss", help="peak RSS of `openvaala reindex` over CONVERSATIONSxITEMS,…: 50000x10,1x50000"
    )
    args = parser.parse_args()
    if args.rss:
        directory = Path(tempfile.mkdtemp(prefix=".bench-reindex-", dir=args.dir))
        try:
            shapes = [tuple(map(int, shape.split("x"))) for shape in args.rss.split(",")]
            await rss(directory, cast("list[tuple[int, int]]", shapes), args.rounds)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        return
    conversations, items, listed = (200, 50, 1000) if args.small else (2000, 200, 10000)
    directory = Path(tempfile.mkdtemp(prefix=".bench-reindex-", dir=args.dir))
    try:
        data_dir = DataDir(directory / "corpus")
        t = time.perf_counter()
        size = await generate(data_dir, conversations, items)
        print(
            f"corpus: {conversations:,} conversations × {items} items, {size / 1e6:.1f} MB "
            f"(generated in {time.perf_counter() - t:.1f} s; warm page cache)"
        )
        # Alternating rounds: on a shared VM either figure moves by a third from run to run, so
        # each ratio compares neighbours in time, and the median of the rounds is the result.
        ratios = []
        for round_no in range(1, args.rounds + 1):
            raw_size, raw_s = raw_read(data_dir)
            raw_rate = raw_size / 1e6 / raw_s
            cpu = time.process_time()
            report = await reindex(data_dir)
            cpu = time.process_time() - cpu
            assert len(report.indexed) == conversations
            rate = report.bytes_read / 1e6 / report.seconds
            ratios.append(rate / raw_rate)
            print(
                f"round {round_no}: raw read + orjson parse {raw_s:5.2f} s {raw_rate:6.1f} MB/s; "
                f"reindex {report.seconds:5.2f} s {rate:6.1f} MB/s ({ratios[-1]:.0%} of raw; "
                f"CPU {cpu:4.2f} s, load {os.getloadavg()[0]:.1f})"
            )
        print(f"reindex, median of {len(ratios)} rounds: {statistics.median(ratios):.0%} of raw")
        await listing(directory, listed)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
