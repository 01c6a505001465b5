"""The context of a session's next request, computed in proportion to what was appended
(docs/design.md, "Performance at scale", issue 17 point 4).

`domain/context.context_items` looks at the whole history (where the latest summary is, which
items it covers). A model call made it walk tens of thousands of items at every call, on the
event loop, when all that changed was a few items at the end. So the last answer is kept per
session, with the history it was computed from, and extended by what was appended since: an
append without a summary adds its items to the context as they are. Anything else — a summary,
other pins, a history replaced (read back from disk) — computes it afresh.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from openvaala_server.domain.context import context_items
from openvaala_server.domain.records import SUMMARY, Item
from openvaala_server.models.assembly import ByOwner
from openvaala_server.runtime import context_view

if TYPE_CHECKING:
    from openvaala_server.runtime.ports import Conversation
    from openvaala_server.runtime.session import LiveSession


class ContextMemo:
    """`context_items(items, pins)` of one session, following appends.

    A session's history list is only ever appended to or replaced whole (read back from disk,
    let go of memory), the rule `domain/positions.py` relies on too: the same list object whose
    last seen item is still where it was has only had items appended since."""

    def __init__(self) -> None:
        self._items: list[Item] | None = None  # the history list last seen (held: identity)
        self._seen = 0  # how many of its items the context was computed from
        self._pins: tuple[str, ...] = ()
        self._context: list[Item] = []
        self._last: Item | None = None
        self.computed = 0  # how many times it was computed whole (for tests)

    def context(self, items: list[Item], pins: Sequence[str]) -> list[Item]:
        """The context: a new list each time (a request keeps it as it was)."""
        pinned = tuple(pins)
        seen = self._seen
        if (
            items is self._items
            and pinned == self._pins
            and len(items) >= seen
            and (seen == 0 or items[seen - 1] is self._last)
        ):
            added = items[seen:]
            if not any(item.get("type") == SUMMARY for item in added):
                self._context.extend(added)
                if added:
                    self._seen, self._last = len(items), items[-1]
                return list(self._context)
        self.computed += 1
        self._items, self._seen, self._pins = items, len(items), pinned
        self._last = items[-1] if items else None
        self._context = context_items(items, pinned)
        return list(self._context)


_memos: ByOwner[ContextMemo] = ByOwner()


def model_context(conv: Conversation, session: LiveSession) -> list[Item]:
    """The items the session's next request sends (domain/context.py)."""
    memo = _memos.get(session)
    if memo is None:
        memo = ContextMemo()
        _memos.set(session, memo)
    return memo.context(session.items, context_view.pinned(conv, session))


def memo_of(session: LiveSession) -> ContextMemo | None:
    return _memos.get(session)


def forget(session: LiveSession) -> None:
    """The session's history was let go of memory (runtime/residency.py): so is its memo."""
    _memos.pop(session)
