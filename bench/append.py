"""Durable append benchmark: what one acknowledged record costs, and what group commit buys.

Measures, on the disk holding the target directory (default: a temp dir under the repo, so the
same disk as the data would be; pass --dir to choose):

1. the raw limit: a loop of ``write(1 KB line) + fdatasync`` on one file (per-op p50/p99, ops/s);
2. the floor any off-loop disk work pays here: an event loop handing a no-op to a thread and
   being woken with its result (p50) — on this 2-vCPU VM ~0.1–0.15 ms, waking idle vCPUs (with
   KVM guest halt polling off, printed when the machine tells; 0.02 ms with it on);
3. `JournalWriter.append` of one ~1 KB record at a time, awaited (p50/p99, appends/s);
4. `Store.append_items` of one ~1 KB item: journal, then index (p50/p99, appends/s);
5. the raw limit of a group commit: 8 files, one 1 KB line each, then one ``syncfs`` (what the
   journal does for a batch spanning files), in a loop: records/s;
6. 8 conversations appending at once through one `JournalWriter` (group commit): records/s, and
   as a share of (5);
7. the same 8 through `Store.append_items` (journal + index, until the index has caught up):
   records/s, and as a share of (6);
8. one conversation appending through `Store.append_items`, one at a time: p50/p99.

(5)–(8) run in alternating rounds; each round is printed, and the medians with the range of the
rounds are the result. (6) and (7) also print the process's CPU time per record (every thread):
on a shared machine the rate moves with the neighbours' load, the CPU cost much less.

Goals: (3) p50 within raw fsync p50 + 0.3 ms; (6) and (7) ≥ 10,000 durable records/s; (8) p99
≤ 2 ms. This disk's fsync
latency moves by 2–5× from minute to minute, so compare figures of one run, not across runs.

Run: ``python bench/append.py [--n 2000] [--rounds 5] [--dir PATH]``. ``--dir /dev/shm``
(tmpfs, fsync is free) shows the CPU cost of the journal and the index alone.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import queue
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from openvaala_server.domain import records as r
from openvaala_server.domain.ids import new_id
from openvaala_server.store import durability
from openvaala_server.store.journal import JournalWriter
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store

TEXT = "lorem ipsum dolor sit amet " * 34  # ~1 KB once stamped and serialised


def payload(n: int) -> dict[str, object]:
    item = {"itemId": new_id(), "type": "agent_message", "text": TEXT, "n": n}
    return {"type": "item", "item": item}


def summarise(name: str, samples: list[float]) -> float:
    samples = sorted(samples)
    p50 = samples[len(samples) // 2] * 1e3
    p99 = samples[int(len(samples) * 0.99)] * 1e3
    rate = len(samples) / sum(samples)
    print(f"{name:<34} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms   {rate:9,.0f} /s")
    return p50


def raw(directory: Path, n: int) -> list[float]:
    line = b"x" * 1023 + b"\n"
    fd = os.open(directory / "raw.bin", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    samples = []
    try:
        for _ in range(n):
            t = time.perf_counter()
            os.write(fd, line)
            os.fdatasync(fd)
            samples.append(time.perf_counter() - t)
    finally:
        os.close(fd)
    return samples


async def thread_floor(n: int) -> list[float]:
    loop = asyncio.get_running_loop()
    work: queue.SimpleQueue[asyncio.Future[None] | None] = queue.SimpleQueue()

    def worker() -> None:
        while (future := work.get()) is not None:
            loop.call_soon_threadsafe(future.set_result, None)

    thread = threading.Thread(target=worker)
    thread.start()
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        future: asyncio.Future[None] = loop.create_future()
        work.put(future)
        await future
        samples.append(time.perf_counter() - t)
    work.put(None)
    thread.join()
    return samples


def raw_group(directory: Path, rounds: int, files: int) -> float | None:
    """Records/s of `files` appends made durable by one syncfs per round (None: no syncfs)."""
    line = b"x" * 1023 + b"\n"
    fds = [
        os.open(directory / f"group-{i}.bin", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        for i in range(files)
    ]
    try:
        if durability.syncfs is None:
            return None
        t = time.perf_counter()
        for _ in range(rounds):
            for fd in fds:
                os.write(fd, line)
            durability.syncfs(fds[0])
        return rounds * files / (time.perf_counter() - t)
    finally:
        for fd in fds:
            os.close(fd)


async def journal_single(directory: Path, n: int) -> list[float]:
    writer = JournalWriter()
    await writer.start()
    path = directory / "single.jsonl"
    samples = []
    for i in range(n):
        t = time.perf_counter()
        await writer.append(path, [payload(i)])
        samples.append(time.perf_counter() - t)
    await writer.close()
    return samples


def created() -> dict[str, object]:
    return {
        "conversationId": new_id(),
        "cwd": "/tmp",
        "agent": "bench",
        "model": "demo",
        "title": "bench",
        "titleSource": "auto",
        "rootSessionId": new_id(),
        "forkedFrom": None,
        "formatVersion": 1,
    }


async def store_single(directory: Path, n: int) -> list[float]:
    store = await Store.open(DataDir(directory))
    c = created()
    await store.create_conversation(c)
    cid, sid = str(c["conversationId"]), str(c["rootSessionId"])
    items = [item(i) for i in range(n)]
    samples = []
    for it in items:
        t = time.perf_counter()
        await store.append_items(cid, sid, [it])
        samples.append(time.perf_counter() - t)
    await store.close()
    return samples


async def journal_concurrent(directory: Path, n: int, writers: int) -> tuple[float, float]:
    """Records/s of `writers` files appending through one `JournalWriter`, and the process's
    CPU µs per record meanwhile (all threads: less moved by a busy machine than the rate)."""
    journal = JournalWriter()
    await journal.start()

    payloads = [[payload(i) for i in range(n)] for _ in range(writers)]  # before the clock

    async def one(w: int) -> None:
        path = directory / f"concurrent-{w}.jsonl"
        for record in payloads[w]:
            await journal.append(path, [record])

    t, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(w) for w in range(writers)))
    elapsed, cpu = time.perf_counter() - t, time.process_time() - cpu
    await journal.close()
    return writers * n / elapsed, cpu / (writers * n) * 1e6


async def store_concurrent(
    directory: Path, n: int, writers: int, name: str = ""
) -> tuple[float, float]:
    """Records/s of `writers` conversations appending through the store, index included: the
    clock stops once the index has caught up, not when the last append returns. And the CPU µs
    per record, as `journal_concurrent`."""
    store = await Store.open(DataDir(directory / f"store-concurrent{name}"))
    targets = []
    for _ in range(writers):
        c = created()
        await store.create_conversation(c)
        targets.append((str(c["conversationId"]), str(c["rootSessionId"])))
    items = [[item(i) for i in range(n)] for _ in targets]  # made before the clock starts

    async def one(cid: str, sid: str, mine: list[r.Item]) -> None:
        for it in mine:
            await store.append_items(cid, sid, [it])

    await store.list_conversations(limit=1)  # the creations are committed: not timed
    t, cpu = time.perf_counter(), time.process_time()
    runs = [one(cid, sid, mine) for (cid, sid), mine in zip(targets, items, strict=True)]
    await asyncio.gather(*runs)
    await store.list_conversations(limit=1)  # a read waits for every queued index write
    elapsed, cpu = time.perf_counter() - t, time.process_time() - cpu
    await store.close()
    return writers * n / elapsed, cpu / (writers * n) * 1e6


def item(n: int) -> r.Item:
    """The item of `payload(n)`: the same size on disk."""
    return {"itemId": new_id(), "type": "agent_message", "text": TEXT, "turnId": str(n)}


def spread(values: list[float], fmt: str = ",.0f") -> str:
    """Median and range of the rounds (this machine is shared: the range is the noise)."""
    return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"


BENCH_DIR = Path(__file__).resolve().parent
HALT_POLL = Path("/sys/module/haltpoll/parameters/guest_halt_poll_ns")
CPUIDLE_DRIVER = Path("/sys/devices/system/cpu/cpuidle/current_driver")


def idle_wake_note() -> str | None:
    """What this machine does with an idle vCPU, when it is a VM that says so. The 8-writer
    figure pays two wake-ups of an idle thread per batch; with KVM's halt polling off (0 ns),
    each is a VM exit, which the thread round trip above shows."""
    try:
        if CPUIDLE_DRIVER.read_text().strip() != "haltpoll":
            return None
        window = int(HALT_POLL.read_text())
    except (OSError, ValueError):
        return None
    off = " (off: an idle vCPU halts at once)" if not window else ""
    return f"guest halt polling: {window:,} ns{off}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="appends per measurement")
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5, help="concurrent rounds (median kept)")
    parser.add_argument("--dir", type=Path, default=BENCH_DIR)
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix=".bench-append-", dir=args.dir))
    try:
        print(f"disk: {directory}  ({args.n} appends of ~1 KB each)")
        raw_p50 = summarise("raw write+fdatasync", raw(directory, args.n))
        summarise("thread round trip (floor)", await thread_floor(args.n))
        if (note := idle_wake_note()) is not None:
            print(note)
        journal_p50 = summarise("JournalWriter.append", await journal_single(directory, args.n))
        summarise(
            "Store.append_items (+ index)", await store_single(directory / "store-single", args.n)
        )
        print(f"overhead over raw fsync (p50): {journal_p50 - raw_p50:+.3f} ms (goal ≤ +0.3 ms)")
        probe, group = os.open(directory, os.O_RDONLY), durability.GroupSync()
        try:
            fits = group.syncfs_fits(probe, os.fstat(probe).st_dev)
        finally:
            os.close(probe)
            group.close()
        print(f"the journal uses syncfs here: {'yes' if fits else 'no (one fdatasync per file)'}")
        # Alternating rounds, as in bench/reindex.py: this disk's latency drifts by 2-5x within
        # minutes, so each round compares neighbours in time and the medians are the result.
        raws: list[float] = []
        journals: list[float] = []
        stores: list[float] = []
        journal_cpu: list[float] = []
        store_cpu: list[float] = []
        p99s: list[float] = []
        for round_no in range(1, args.rounds + 1):
            group_rate = raw_group(directory, args.n // 2, args.writers)
            rate, cpu = await journal_concurrent(directory, args.n // 2, args.writers)
            # A fresh store each round, so the index does not grow from round to round.
            store_rate, s_cpu = await store_concurrent(
                directory, args.n // 2, args.writers, f"-{round_no}"
            )
            single = sorted(await store_single(directory / f"single-{round_no}", args.n // 2))
            p99 = single[int(len(single) * 0.99)] * 1e3
            raw_text = f"raw {group_rate:7,.0f}" if group_rate else "raw   (none)"
            print(
                f"round {round_no}: {args.writers} writers: {raw_text}, "
                f"JournalWriter {rate:7,.0f} ({cpu:4.0f} µs CPU/record), "
                f"Store.append_items {store_rate:7,.0f} ({s_cpu:4.0f} µs CPU/record) records/s; "
                f"one Store.append_items p50 {single[len(single) // 2] * 1e3:.3f} ms "
                f"p99 {p99:.3f} ms"
            )
            if group_rate:
                raws.append(group_rate)
            journals.append(rate)
            stores.append(store_rate)
            journal_cpu.append(cpu)
            store_cpu.append(s_cpu)
            p99s.append(p99)
        print(f"medians of {args.rounds} rounds (range):")
        if raws:
            print(f"raw: {args.writers} files + one syncfs        {spread(raws)} records/s")
        # Shares are the median of each round's own share: neighbours in time compared.
        shares = [j / r for j, r in zip(journals, raws, strict=False)] if raws else []
        share = f", {statistics.median(shares):.0%} of raw" if shares else ""
        print(
            f"{args.writers} writers, JournalWriter        {spread(journals)} records/s "
            f"(goal ≥ 10,000{share}); CPU {spread(journal_cpu)} µs/record"
        )
        ratios = [s / j for s, j in zip(stores, journals, strict=True)]
        print(
            f"{args.writers} writers, Store.append_items  {spread(stores)} records/s "
            f"(goal ≥ 10,000; {spread(ratios, '.0%')} of the journal alone); "
            f"CPU {spread(store_cpu)} µs/record"
        )
        print(f"one Store.append_items, p99            {spread(p99s, '.3f')} ms (goal ≤ 2 ms)")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
