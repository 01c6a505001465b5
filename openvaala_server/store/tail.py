"""A session's model context read from the end of its journal (docs/storage.md, "Reading a
context"): the items from where its context begins (domain/context_tail.py) to the end, without
parsing what lies before them, and how many items lie before them.

A subscribed session holds only this in memory (docs/design.md, "Subscribed sessions hold
their context"); the whole journal stays the truth and is read whole by what needs all of it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from openvaala_server.domain import records as r
from openvaala_server.domain.context_tail import TailScan
from openvaala_server.store import journal

_COUNT_BLOCK = 1 << 20


@dataclass(frozen=True)
class Tail:
    items: list[r.Item]  # in file order: the context and at least the last `at_least` items
    older: int  # how many items come before them (lines: a damaged one counts too)
    start: int  # where the line of `items[0]` starts in the file (0 when there is none)


def item_of(record: r.Record) -> r.Item | None:
    """The item of an item record, or None when no reader could use it — not an object, or no
    string `itemId` and `type` (a hand-edited file or an imported bundle: import checks each
    line's shape only). Every read skips those, as it skips a line damaged on disk."""
    item = record.get("item")
    if (
        isinstance(item, dict)
        and isinstance(item.get("itemId"), str)
        and isinstance(item.get("type"), str)
    ):
        return item
    return None


def read_context(path: Path, pinned: Collection[str], at_least: int) -> Tail:
    """The items of the session file `path` from where its context begins (or from its last
    `at_least` items, if that is earlier) to its end. Raises FileNotFoundError."""
    scan = TailScan(pinned)
    items: list[r.Item] = []
    with open(path, "rb") as f:
        start = journal.good_end(f)
        for offset, line in journal.reverse_lines(f, start):
            if scan.done and len(items) >= at_least:
                return Tail(items[::-1], _lines_before(f, start), start)
            record = journal.parse_line(line)
            start = offset
            if isinstance(record, str) or record["type"] != r.ITEM:
                continue  # what a whole read skips too
            item = item_of(record)
            if item is None:
                continue
            items.append(item)
            scan.feed(item)
    return Tail(items[::-1], 0, 0)


def _lines_before(f: BinaryIO, end: int) -> int:
    """How many lines end before `end` (a session file holds one item record a line): a count
    of newlines, block by block, with nothing parsed."""
    f.seek(0)
    count, pos = 0, 0
    while pos < end:
        block = f.read(min(_COUNT_BLOCK, end - pos))
        if not block:
            break
        count += block.count(b"\n")
        pos += len(block)
    return count
