"""Where a history's model context begins: the part a subscribed session keeps in memory.

`context.context_items` looks at the latest completed summary, the item it covers up to
(`coversUpTo`), the items after that point and the pinned ones before it. A tail of the history
that starts at the covered item, or at the oldest pinned item before it if that is older, gives
the same context as the whole history (docs/design.md, "Subscribed sessions hold their
context"). With no summary the context is the whole history: no shorter tail will do.

`TailScan` finds that start reading a history newest first (a journal read backwards), so a
context is read from disk without parsing what lies before it; `context_start` is the same
answer on a history in memory. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from openvaala_server.domain.records import SUMMARY, Item


class TailScan:
    """Fed a history's items newest first; `done` once what was fed holds its context."""

    def __init__(self, pinned: Collection[str] = ()) -> None:
        self._pinned = set(pinned)
        self._covers: str | None = None  # the latest summary's `coversUpTo`, once seen
        self._summary_id: str | None = None
        self._reached = False  # the covered item (or the summary, when it covers none here)
        self.done = False

    def feed(self, item: Item) -> bool:
        """Take the next older item; True when the items fed so far hold the context."""
        item_id = item.get("itemId")
        self._pinned.discard(str(item_id))
        if self._summary_id is None:
            if item.get("type") == SUMMARY and item.get("status") == "completed":
                self._summary_id = str(item_id)
                covers = item.get("coversUpTo")
                self._covers = covers if isinstance(covers, str) else None
        elif item_id == self._covers:
            self._reached = True
        # Pinned items the summary covers come from before it: read on until each was seen.
        self.done = self._reached and not self._pinned
        return self.done


def context_start(items: Sequence[Item], pinned: Collection[str] = ()) -> int:
    """The index from which `items[start:]` has the same `context_items` as `items` (0: only
    the whole history has it)."""
    scan = TailScan(pinned)
    for index in range(len(items) - 1, -1, -1):
        if scan.feed(items[index]):
            return index
    return 0
