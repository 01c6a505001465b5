"""Pages of a history for `conversation/read`: of one list (`list_page`), and of a fork's root
history joined with its original's older part without building the join (`joined_page`;
docs/design.md, "Performance at scale").

A fork made after a compaction holds only what its model sees: the pinned items the summary
covers, the summary, and what follows (runtime/history.py `fork`). Its history as read is the
original's items up to the item the summary covers (`cut`), each marked `fromConversationId`,
then the fork's own items, less the pinned copies: those show once, in place in the original's
part. Building that join at every page cost O(history) (27 ms a page at 50k items); here the
cursor is found with each list's position index and only the page's older items are copied.

The copied pinned items come before the fork's copied summary, which is the first summary of the
fork that the original's part does not hold; nothing after it is in that part, as the fork's
later items have new ids. Only the items before it are checked against the original.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openvaala_server.domain import records as r
from openvaala_server.domain.positions import PositionIndex


@dataclass(frozen=True)
class Page:
    items: list[r.Item]
    has_more: bool


def list_page(
    items: Sequence[r.Item], before: str | None, limit: int, positions: PositionIndex | None = None
) -> Page | None:
    """The last `limit` items of one list before `before` (the end without one), found by
    `positions` when given (the list's own index), else by a scan; None when it is not there."""
    end: int | None = len(items)
    if before is not None:
        if positions is not None:
            end = positions.find(items, before)
        else:
            end = next((i for i, it in enumerate(items) if it["itemId"] == before), None)
    if end is None:
        return None
    start = max(0, end - limit)
    return Page(list(items[start:end]), start > 0)


def joined_page(
    earlier: Sequence[r.Item],
    theirs: PositionIndex,
    cut: str | None,
    own: Sequence[r.Item],
    mine: PositionIndex,
    source_id: str,
    before: str | None,
    limit: int,
) -> Page | None:
    """The last `limit` items before `before` (the end without one) of the joined history of
    `earlier` (the original's root items, `theirs` their index) cut after `cut`, and `own` (the
    fork's root items, `mine` their index); None when `before` is in neither part."""
    at = theirs.find(earlier, cut, rescan=False) if cut else None
    end = at + 1 if at is not None else len(earlier)

    def in_earlier(item_id: str) -> bool:
        pos = theirs.find(earlier, item_id, rescan=False)
        return pos is not None and pos < end

    first = next(
        (
            i
            for i, item in enumerate(own)
            if item.get("type") == r.SUMMARY and not in_earlier(item["itemId"])
        ),
        len(own),
    )
    head = [item for item in own[:first] if not in_earlier(item["itemId"])]
    stop = end + len(head) + len(own) - first
    if before is not None:
        pos = mine.find(own, before, rescan=False)
        if pos is not None and pos >= first:
            stop = end + len(head) + pos - first
        elif in_earlier(before):
            stop = theirs.find(earlier, before, rescan=False) or 0
        elif pos is not None:
            stop = end + next(i for i, item in enumerate(head) if item["itemId"] == before)
        else:
            return None
    start = max(0, stop - limit)
    items: list[r.Item] = [
        {**i, "fromConversationId": source_id} for i in earlier[start : min(stop, end)]
    ]
    items += head[max(0, start - end) : max(0, stop - end)]
    mine_from, mine_to = max(0, start - end - len(head)), max(0, stop - end - len(head))
    items += own[first + mine_from : first + mine_to]
    return Page(items, start > 0)
