"""Paging back through a long history over the real websocket (issue 17: "one page of 20
scrolling back near the end of a 50k-item conversation", "read the whole history").

For each size (default 1k / 10k / 50k items) a conversation is written by bench/_history.py (turns
with tool calls, subagents and compactions, as the daemon writes them) into a fresh data
directory, a real daemon is started on it, and a raw websocket client:

1. opens it (the first `conversation/read`: the last page, held since the open), then at once
   reads the page before the held tail (what scrolling up asks first) and a page from the
   middle: both are answered from the journal while the whole history loads in the background
   (whether it had loaded by then is printed); a second client's `conversation/list` round trips
   meanwhile show how long the event loop stalls;
2. reads one page of 20 ending 100 items before the end (`beforeItem`), `--reads` times:
   median and p99 ms — the goal is flat across sizes, < 1 ms;
3. pages through the whole history backwards, 1,000 items per request: total ms and items/ms;
4. once the daemon has let the history go (3 s after the last page), the same first pages and
   the whole history again: now all from the journal.

The figures include the websocket round trip (orjson on both sides), which a page of 20 costs at
any size. Run: ``python bench/paging.py [--sizes 1000,10000,50000] [--reads 200]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import BenchDaemon, RawClient, percentile
from bench._history import write_conversation


async def page(client: RawClient, cid: str, before: str | None, limit: int) -> tuple[Any, float]:
    params: dict[str, Any] = {"conversationId": cid, "limit": limit}
    if before is not None:
        params["beforeItem"] = before
    started = time.perf_counter()
    result = await client.request("conversation/read", params)
    return result, (time.perf_counter() - started) * 1000


async def whole_history(client: RawClient, cid: str, count: int) -> float:
    started = time.perf_counter()
    before: str | None = None
    seen = 0
    while True:
        result, _ = await page(client, cid, before, 1000)
        seen += len(result["items"])
        if not result["hasMore"]:
            break
        before = result["items"][0]["itemId"]
    assert seen == count
    return (time.perf_counter() - started) * 1000


async def ping(client: RawClient, cid: str, until: asyncio.Event, times: list[float]) -> None:
    """Another client's round trips while the conversation opens: how long the loop stalls."""
    while not until.is_set():
        started = time.perf_counter()
        await client.request("conversation/list", {"limit": 1})
        times.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.002)


async def wait_log(daemon: BenchDaemon, text: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if text in daemon.log():
            return
        await asyncio.sleep(0.02)
    raise TimeoutError(f"the daemon did not log {text!r}")


async def measure(count: int, reads: int) -> None:
    with tempfile.TemporaryDirectory(prefix="ovbench-paging-") as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        cwd.mkdir()
        cid, ids = await write_conversation(home, cwd, count)
        with BenchDaemon(home=home) as daemon:
            client = await RawClient.connect(daemon.address, daemon.token)
            other = await RawClient.connect(daemon.address, daemon.token, "other")
            try:
                pings: list[float] = []
                stop = asyncio.Event()
                pinger = asyncio.create_task(ping(other, cid, stop, pings))
                await asyncio.sleep(0.05)
                _, opened = await page(client, cid, None, 20)
                # Right after the open, the page before the held tail (scrolling up), then one
                # from the middle; "read whole" in the log says the history had loaded.
                result, first = await page(client, cid, ids[-100], 20)
                assert [i["itemId"] for i in result["items"]] == ids[-120:-100]
                result, middle = await page(client, cid, ids[count // 2], 20)
                assert [i["itemId"] for i in result["items"]] == ids[count // 2 - 20 : count // 2]
                loaded_meanwhile = "read whole" in daemon.log()
                await wait_log(daemon, "read whole")
                await asyncio.sleep(0.5)  # the warm-up after the load
                stop.set()
                await pinger
                times: list[float] = []
                for _ in range(reads):
                    result, ms = await page(client, cid, ids[-100], 20)
                    times.append(ms)
                    assert [i["itemId"] for i in result["items"]] == ids[-120:-100]
                times.sort()
                whole = await whole_history(client, cid, count)
                # Let go 3 s after the last page (runtime/residency.py), then read again.
                await wait_log(daemon, "history released")
                await asyncio.sleep(1.0)  # its freeing, in a worker thread, holds the GIL a while
                _, first_released = await page(client, cid, ids[-100], 20)
                _, middle_released = await page(client, cid, ids[count // 2], 20)
                whole_released = await whole_history(client, cid, count)
            finally:
                await client.close()
                await other.close()
    pings.sort()
    print(
        f"{count:>7,} items: open {opened:6.1f} ms; first older page {first:6.1f} ms, "
        f"from the middle {middle:6.1f} ms (history loaded meanwhile: {loaded_meanwhile}); "
        f"other client while opening: max {pings[-1]:6.1f} ms, "
        f"p99 {percentile(pings, 0.99):6.1f} ms over {len(pings)}\n"
        f"{'':>16}page of 20 near the end: median {statistics.median(times):6.2f} ms, "
        f"p99 {percentile(times, 0.99):6.2f} ms | whole history by 1,000: {whole:7.1f} ms "
        f"({count / whole:4.0f} items/ms)\n"
        f"{'':>16}released: first older page {first_released:6.1f} ms, from the middle "
        f"{middle_released:6.1f} ms, whole history by 1,000 {whole_released:7.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--reads", type=int, default=200)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        asyncio.run(measure(size, args.reads))


if __name__ == "__main__":
    main()
