"""Where an item is in a session's history, by its id, without scanning (docs/design.md,
"Performance at scale").

`conversation/read` pages backwards from `beforeItem`. Finding that item by scanning from the
start made every page cost O(history): 10 ms per page at 50k items, and paging through a whole
history quadratic. This keeps an id → position map of one history list, built once and extended
as items are appended, so a page costs the same at 1k and 50k items.

Item ids are unique in a history (each item gets a new one). The map is only a hint: every
answer is checked against the list (`items[pos]` must carry the id), so a history that changed
in a way the map did not follow (replaced, items inserted) is indexed again instead of answering
wrongly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Items = Sequence[Mapping[str, object]]


class PositionIndex:
    """Positions of item ids in one list of items (`find` follows appends cheaply)."""

    def __init__(self) -> None:
        self._items: Items | None = None  # the list indexed (held: its id() stays unique)
        self._positions: dict[str, int] = {}
        self._indexed = 0  # how many leading items of that list are in `_positions`

    def find(self, items: Items, item_id: str, *, rescan: bool = True) -> int | None:
        """The position of the item `item_id` in `items`, or None when it is not there.

        `rescan=False`: an id the map does not hold is taken as absent, without indexing the
        list afresh, for asking whether an item is there at all (a fork's joined history asks
        this of many ids that are not). Only right for a list that is appended to and never
        changed otherwise, as a session's history is; a position found stale is still indexed
        afresh."""
        if items is not self._items:
            self._items, self._positions, self._indexed = items, {}, 0
        self._extend(items)
        pos = self._positions.get(item_id)
        if pos is not None and pos < len(items) and items[pos].get("itemId") == item_id:
            return pos
        if pos is None and not rescan:
            return None
        # Stale (the list changed other than by appending) or absent: index it afresh once.
        self._positions, self._indexed = {}, 0
        self._extend(items)
        pos = self._positions.get(item_id)
        return pos

    def _extend(self, items: Items) -> None:
        positions = self._positions
        for pos in range(self._indexed, len(items)):
            item_id = items[pos].get("itemId")
            if isinstance(item_id, str):
                positions.setdefault(item_id, pos)
        self._indexed = max(self._indexed, len(items))
