"""Paging back through the history of a conversation forked after a compaction, over the real
websocket.

Such a fork copies only the latest summary and what follows it, and refers to the original for
the older items (`forkedFrom.olderHistory`); `conversation/read` on its root joins the original's
older items with its own (docs/protocol.md "Forks after a compaction"). This measures what a page
of that joined history costs as the original grows.

For each size (default 1k / 10k / 50k items) a conversation of N user/agent items is written with
the store's own writer into a fresh data directory, followed by one summary covering all but its
last 10 items. A real daemon is started on it, and a raw websocket client:

1. forks it (`conversation/fork`): the fork holds the summary and the last 10 items, its
   `forkedFrom.olderHistory` names the original and the summary's `coversUpTo`;
2. reads the fork's last page of 20, then `--reads` times a page of 20 ending 100 items before the
   cut (`beforeItem` in the original's part): median and p99 ms;
3. pages through the fork's whole joined history backwards, 1,000 items per request: total ms.
   The joined history is the original's N - 10 older items, then the fork's summary and its last
   10 items: N + 1 in all (the original's own summary, after the cut, is not in it).

The figures include the websocket round trip (orjson on both sides). Run:
``python bench/fork_paging.py [--sizes 1000,10000,50000] [--reads 200]``.
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
from bench._history import write_conversation
from openvaala_server.domain import records as r

KEPT = 10  # items after the summary's cut: the fork copies them with the summary


async def write_compacted(home: Path, cwd: Path, count: int) -> tuple[str, list[str], str]:
    """`count` user/agent items, then a summary covering all but the last `KEPT`: (the
    conversation's id, the items' ids, the summary's id)."""
    summary_id = secrets.token_hex(16)
    covered = count - KEPT

    def summary(sid: str, ids: list[str]) -> list[dict[str, Any]]:
        # As runtime/compaction.py `commit` writes it, by hand: the last KEPT items stay after it.
        return [
            {
                "itemId": summary_id,
                "type": r.SUMMARY,
                "sessionId": sid,
                "turnId": None,
                "createdAt": r.utc_now(),
                "status": r.COMPLETED,
                "text": f"The first {covered} items fixed {covered // 2} issues.",
                "coversUpTo": ids[covered - 1],
                "coveredItems": covered,
                "reason": "manual",
                "model": "demo",
                "replacesFrom": ids[0],
                "replacedItems": covered,
                "keptPinned": [],
            }
        ]

    cid, ids = await write_conversation(home, cwd, count, tail=summary)
    return cid, ids, summary_id


async def page(client: RawClient, cid: str, before: str | None, limit: int) -> tuple[Any, float]:
    params: dict[str, Any] = {"conversationId": cid, "limit": limit}
    if before is not None:
        params["beforeItem"] = before
    started = time.perf_counter()
    result = await client.request("conversation/read", params)
    return result, (time.perf_counter() - started) * 1000


async def whole_history(client: RawClient, cid: str) -> tuple[list[Any], float]:
    """Every item of the history, paging backwards by 1,000, and how long that took (ms)."""
    started = time.perf_counter()
    before: str | None = None
    pages: list[list[Any]] = []
    while True:
        result, _ = await page(client, cid, before, 1000)
        pages.append(result["items"])
        if not result["hasMore"]:
            break
        before = result["items"][0]["itemId"]
    took = (time.perf_counter() - started) * 1000
    return [item for items in reversed(pages) for item in items], took


async def measure(count: int, reads: int) -> None:
    assert count > KEPT + 130, "the page read lies 100 items before the cut"
    with tempfile.TemporaryDirectory(prefix="ovbench-fork-paging-") as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        cwd.mkdir()
        cid, ids, summary_id = await write_compacted(home, cwd, count)
        cut = count - KEPT  # ids[:cut] are the original's older part
        with BenchDaemon(home=home) as daemon:
            client = await RawClient.connect(daemon.address, daemon.token)
            try:
                started = time.perf_counter()
                forked = (await client.request("conversation/fork", {"conversationId": cid}))[
                    "conversation"
                ]
                fork_ms = (time.perf_counter() - started) * 1000
                fork = forked["conversationId"]
                older = (forked.get("forkedFrom") or {}).get("olderHistory")
                if not isinstance(older, dict) or (
                    older.get("conversationId"),
                    older.get("upToItemId"),
                ) != (cid, ids[cut - 1]):
                    raise SystemExit(
                        f"the fork did not refer to the original's older history: "
                        f"forkedFrom = {forked.get('forkedFrom')!r}"
                    )
                result, first = await page(client, fork, None, 20)
                expected = [*ids[cut - 9 : cut], summary_id, *ids[cut:]]
                assert [i["itemId"] for i in result["items"]] == expected, result["items"]
                before = ids[cut - 100]
                times: list[float] = []
                for _ in range(reads):
                    result, ms = await page(client, fork, before, 20)
                    times.append(ms)
                    items = result["items"]
                    assert [i["itemId"] for i in items] == ids[cut - 120 : cut - 100]
                    assert all(i.get("fromConversationId") == cid for i in items), items[0]
                times.sort()
                joined, whole = await whole_history(client, fork)
                print(f"{'':>4}{count:,} items: the fork's joined history has {len(joined):,}")
                assert [i["itemId"] for i in joined] == [*ids[:cut], summary_id, *ids[cut:]]
                assert all(i.get("fromConversationId") == cid for i in joined[:cut])
                assert all("fromConversationId" not in i for i in joined[cut:])
                released = "history released" in daemon.log()
            finally:
                await client.close()
    print(
        f"fork after compaction, {count:,} items: fork {fork_ms:.1f} ms, its last page "
        f"{first:.1f} ms; page of 20 in the original's part median "
        f"{statistics.median(times):.2f} ms p99 {percentile(times, 0.99):.2f} ms; whole joined "
        f"history by 1,000 {whole:.1f} ms ({len(joined) / whole:.0f} items/ms)"
        + ("; a history was let go meanwhile" if released else "")
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
