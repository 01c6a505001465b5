"""Where a history's model context begins (domain/context_tail.py): a tail from there gives the
model exactly what the whole history gives it, pins and folded summaries included."""

from __future__ import annotations

import random

from openvaala_server.domain import records as r
from openvaala_server.domain.context import context_items
from openvaala_server.domain.context_tail import TailScan, context_start


def _history(rng: random.Random) -> tuple[list[r.Item], list[str]]:
    """Messages and summaries in a random order; each summary covers some earlier item (or,
    as in a fork after compaction, one that is not in this history); some messages pinned."""
    items: list[r.Item] = []
    for n in range(rng.randrange(0, 60)):
        roll = rng.random()
        if items and roll < 0.12:
            covers = rng.choice(items)["itemId"] if rng.random() < 0.9 else "elsewhere"
            status = r.COMPLETED if rng.random() < 0.85 else r.IN_PROGRESS
            items.append(
                {"itemId": f"s{n}", "type": r.SUMMARY, "status": status, "coversUpTo": covers}
            )
        else:
            items.append({"itemId": f"m{n}", "type": r.USER_MESSAGE, "status": r.COMPLETED})
    messages = [i["itemId"] for i in items if i["type"] == r.USER_MESSAGE]
    pinned = rng.sample(messages, min(len(messages), rng.choice([0, 0, 1, 2])))
    if rng.random() < 0.1:
        pinned.append("not-in-this-history")
    return items, pinned


def test_the_tail_from_the_context_start_gives_the_same_context() -> None:
    rng = random.Random(40)
    shortened = 0
    for _ in range(3000):
        items, pinned = _history(rng)
        start = context_start(items, pinned)
        assert context_items(items[start:], pinned) == context_items(items, pinned)
        if start > 0:  # it starts at the item the latest summary covers, or at a pin
            shortened += 1
            summary = next(
                i for i in reversed(items) if i["type"] == r.SUMMARY and i["status"] == r.COMPLETED
            )
            assert items[start]["itemId"] in (summary["coversUpTo"], *pinned)
    assert shortened > 500  # the histories exercise the shortening, not only "whole"


def test_the_scan_reads_newest_first_and_stops_where_the_context_starts() -> None:
    items: list[r.Item] = [
        {"itemId": f"m{n}", "type": r.USER_MESSAGE, "status": r.COMPLETED} for n in range(10)
    ]
    items.insert(8, {"itemId": "s", "type": r.SUMMARY, "status": r.COMPLETED, "coversUpTo": "m5"})
    scan = TailScan()
    fed = [item["itemId"] for item in reversed(items) if not scan.feed(item)]
    assert fed == ["m9", "m8", "s", "m7", "m6"]  # done at m5, the covered item
    assert context_start(items) == 5
    # A pin older than the covered point: read back to it.
    assert context_start(items, ["m2"]) == 2
    # No summary, or one covering what is not here: the whole history.
    assert context_start(items[:8]) == 0
    items[8] = {**items[8], "coversUpTo": "elsewhere"}
    assert context_start(items) == 0
