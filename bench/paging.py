"""Paging back through a long history over the real websocket (issue 17: "one page of 20
scrolling back near the end of a 50k-item conversation", "read the whole history").

For each size (default 1k / 10k / 50k items) a conversation is written with the store's own writer
into a fresh data directory, a real daemon is started on it, and a raw websocket client:

1. opens it (the first `conversation/read`: the last page, held since the open) and reads a page
   from the middle (which waits for the whole history to be read: printed, not the figure);
2. reads one page of 20 ending 100 items before the end (`beforeItem`), `--reads` times:
   median and p99 ms — the goal is flat across sizes, < 1 ms;
3. pages through the whole history backwards, 1,000 items per request: total ms and items/ms.

The figures include the websocket round trip (orjson on both sides), which a page of 20 costs at
any size. Run: ``python bench/paging.py [--sizes 1000,10000,50000] [--reads 200]``.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import BenchDaemon, RawClient, percentile
from openvaala_server.domain import records as r
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store


async def write_conversation(home: Path, cwd: Path, count: int) -> tuple[str, list[str]]:
    store = await Store.open(DataDir(home))
    cid, sid = secrets.token_hex(16), secrets.token_hex(16)
    await store.create_conversation(
        {
            "conversationId": cid,
            "cwd": str(cwd),
            "agent": "default",
            "model": "demo",
            "title": f"{count} items",
            "titleSource": "user",
            "rootSessionId": sid,
            "forkedFrom": None,
            "formatVersion": r.FORMAT_VERSION,
        }
    )
    prefix = secrets.token_hex(10)
    ids = [f"{prefix}{n:012x}" for n in range(count)]
    batch: list[r.Item] = []
    for n, item_id in enumerate(ids):
        item: r.Item = {
            "itemId": item_id,
            "sessionId": sid,
            "turnId": f"{prefix[::-1]}{n // 2:012x}",
            "createdAt": r.utc_now(),
            "status": r.COMPLETED,
        }
        if n % 2 == 0:
            item["type"], item["origin"] = r.USER_MESSAGE, "user"
            item["text"] = f"Please look at issue {n}."
        else:
            item["type"] = r.AGENT_MESSAGE
            item["text"] = f"Issue {n} is fixed: the loop was off by one."
        batch.append(item)
        if len(batch) == 10_000:
            await store.append_items(cid, sid, batch)
            batch = []
    if batch:
        await store.append_items(cid, sid, batch)
    await store.close()
    return cid, ids


async def measure(count: int, reads: int) -> None:
    with tempfile.TemporaryDirectory(prefix="ovbench-paging-") as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        cwd.mkdir()
        cid, ids = await write_conversation(home, cwd, count)
        with BenchDaemon(home=home) as daemon:
            client = await RawClient.connect(daemon.address, daemon.token)
            try:
                started = time.perf_counter()
                await client.request("conversation/read", {"conversationId": cid, "limit": 20})
                opened = (time.perf_counter() - started) * 1000
                # A page older than the one held since the open waits for the whole history.
                started = time.perf_counter()
                await client.request(
                    "conversation/read",
                    {"conversationId": cid, "beforeItem": ids[count // 2], "limit": 20},
                )
                loaded = (time.perf_counter() - started) * 1000
                near_end = ids[-100]
                times: list[float] = []
                for _ in range(reads):
                    started = time.perf_counter()
                    page = await client.request(
                        "conversation/read",
                        {"conversationId": cid, "beforeItem": near_end, "limit": 20},
                    )
                    times.append((time.perf_counter() - started) * 1000)
                    assert [i["itemId"] for i in page["items"]] == ids[-120:-100]
                times.sort()
                started = time.perf_counter()
                before: str | None = None
                seen = 0
                while True:
                    params: dict[str, Any] = {"conversationId": cid, "limit": 1000}
                    if before is not None:
                        params["beforeItem"] = before
                    page = await client.request("conversation/read", params)
                    seen += len(page["items"])
                    if not page["hasMore"]:
                        break
                    before = page["items"][0]["itemId"]
                whole = (time.perf_counter() - started) * 1000
                assert seen == count
            finally:
                await client.close()
    print(
        f"{count:>7,} items: open {opened:8.1f} ms, first older page {loaded:8.1f} ms | "
        "page of 20 near the end: "
        f"median {statistics.median(times):6.2f} ms, p99 {percentile(times, 0.99):6.2f} ms | "
        f"whole history by 1,000: {whole:8.1f} ms ({count / whole:6.0f} items/ms)"
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
