"""How much of a conversation's history stays in memory (docs/design.md, "Performance at scale"
and "Subscribed sessions hold their context").

Three levels, each a tail of the history: the whole of it, while a turn runs or waits, or in the
`READ_GRACE_S` seconds after something read it whole (a fork, a search, paging back through a
history reads many pages in a row); its model context (domain/context_tail.py: what the next
model call sends, and at least the last page), while clients are subscribed and nothing runs;
its last page (what a snapshot shows), once nobody watches. What is let go is on disk: whatever
needs more awaits `LiveConversation.ensure_context` or `ensure_history`, which read it back from
the journal. A page older than the held tail is read from the journal alone (`split_page`):
paging does not bring the whole history back. So the daemon's memory grows with the contexts of
the conversations open, not with their histories.

The released items are freed in a worker thread: dropping the last reference to 50k dicts costs
tens of milliseconds, which on the event loop would stall every client.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from openvaala_server.domain.context import since_summary
from openvaala_server.domain.context_tail import context_start
from openvaala_server.domain.positions import PositionIndex
from openvaala_server.domain.records import SUMMARY, Item
from openvaala_server.domain.usage import forget_estimates
from openvaala_server.runtime import warmup

if TYPE_CHECKING:
    from openvaala_server.runtime.hub import Hub
    from openvaala_server.runtime.ports import Services
    from openvaala_server.runtime.session import LiveSession

log = logging.getLogger(__name__)

# A reader (not subscribed) keeps the whole history in memory this long after its last page.
READ_GRACE_S = 3.0
# Kept per session when released: the snapshot's page (runtime/conversation.py SNAPSHOT_PAGE).
KEEP = 100


def _trim_heap() -> None:
    """Give freed heap pages back to the system (glibc keeps them by default)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    # Looked up at the first release, not at the daemon's start: finding the C library runs
    # `ldconfig` (docs/design.md, "Start-up imports").
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None
    return trim


def _free(lists: list[list[Item]]) -> None:
    for items in lists:
        forget_estimates(items)
        items.clear()
    _trim_heap()


@dataclass(frozen=True)
class Split:
    """A page of a partly loaded history, cut where the held tail begins: the newest part is
    held, the older part is read from the session's journal (docs/design.md "Performance at
    scale"). Nothing older than the held tail changes (items are only appended), so the two
    parts join into what the whole history would answer."""

    held: list[Item]  # the page's items from the held tail
    before: str | None  # the journal part ends just before this item (None: at its end)
    count: int  # how many items the journal part has at most (0: none)


def split_page(session: LiveSession, before: str | None, limit: int) -> Split | None:
    """How to answer a page of a partly loaded history (a conversation just opened, or let go)
    without waiting for the rest to be parsed; None when the history is whole (read it)."""
    if session.history_complete:
        return None
    held = session.items
    if not held:  # none held (a closed subagent session just opened): the journal alone
        return Split([], before, limit)
    if before is None:
        end = len(held)
    else:
        found = session.positions.find(held, before)
        if found is None:  # older than the held tail, or not there: the journal says which
            return Split([], before, limit)
        end = found
    if end >= limit:
        return Split(held[end - limit : end], None, 0)
    first = held[0].get("itemId") if held else None
    if not isinstance(first, str):
        return None
    return Split(held[:end], first, limit - end)


class Owner(Protocol):
    """The conversation whose histories this decides on (`LiveConversation`, which owns it:
    named by this interface so the import graph has no cycle, docs/design.md "Untangled
    runtime")."""

    @property
    def conversation_id(self) -> str: ...

    @property
    def runtime(self) -> Services: ...

    @property
    def hub(self) -> Hub: ...

    @property
    def persisted(self) -> bool: ...

    @property
    def sessions(self) -> dict[str, LiveSession]: ...

    def is_quiet(self) -> bool: ...

    def pinned(self, session: LiveSession) -> list[str]: ...


class Residency:
    """Decides when one conversation lets go of its histories (see the module docstring)."""

    def __init__(self, conv: Owner) -> None:
        self.conv = conv
        self._last_read = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self.freeing: asyncio.Future[None] | None = None  # the last release's freeing
        # Sessions whose context was their whole list when last looked at (no summary): the
        # list's id and length then. Not scanned again (on the loop: ~25 ms at 50k items) until
        # a summary is added; another list at a freed one's address is at worst not let go.
        self._whole: dict[str, tuple[int, int]] = {}

    def read(self) -> None:
        """A client read a page, or something read the whole history back: keep it a while
        (the next page may follow), then hold only what is still needed."""
        self._last_read = time.monotonic()
        self._schedule(READ_GRACE_S)

    def check(self) -> None:
        """Something that kept the history may have ended (a client left, a turn ended)."""
        wait = self._last_read + READ_GRACE_S - time.monotonic()
        if wait > 0:
            self._schedule(wait)
        else:
            self._release_if_idle()

    def _schedule(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a unit test): nothing to schedule
            return
        self._timer = loop.call_later(delay, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self.check()

    def _quiet(self) -> bool:
        """Nothing runs, waits, compacts or is read back: the history may shrink (to the
        contexts while clients watch)."""
        conv = self.conv
        return (
            conv.persisted
            and conv.is_quiet()
            and all(
                s.preparing is None and s.compaction_task is None for s in conv.sessions.values()
            )
        )

    def _release_if_idle(self) -> None:
        if not self._quiet():
            return
        if self.conv.hub.subscriber_count == 0:
            self._release(self._last_pages(), contexts=False)
        else:
            self._release(self._contexts(), contexts=True)

    def _last_pages(self) -> list[tuple[LiveSession, int]]:
        return [
            (s, len(s.items) - KEEP)
            for s in self.conv.sessions.values()
            if len(s.items) > KEEP and s.context_ready
        ]

    def _contexts(self) -> list[tuple[LiveSession, int]]:
        """Where each session's context begins (the last page kept at least)."""
        cuts = []
        for session in self.conv.sessions.values():
            if not session.context_ready or len(session.items) <= KEEP:
                continue
            if self._still_whole(session):
                continue
            start = context_start(session.items, self.conv.pinned(session))
            if start == 0:
                self._whole[session.session_id] = (id(session.items), len(session.items))
            cut = min(start, len(session.items) - KEEP)
            if cut > 0:
                cuts.append((session, cut))
        return cuts

    def _still_whole(self, session: LiveSession) -> bool:
        seen = self._whole.get(session.session_id)
        items = session.items
        return (
            seen is not None
            and seen[0] == id(items)
            and len(items) >= seen[1]
            and not any(i.get("type") == SUMMARY for i in items[seen[1] :])
        )

    def _release(self, cuts: list[tuple[LiveSession, int]], *, contexts: bool) -> None:
        """Let go of each session's items before its cut: what lies before its context
        (`contexts`), or all but its last page (nobody watches: the providers' prefixes go
        too)."""
        released: list[list[Item]] = []
        kept = 0
        for session, cut in cuts:
            if not contexts:  # the gauge's figures of the whole context (runtime/context_view.py)
                session.released_figures = since_summary(session.items)
            # Nobody watching: what the providers and the estimates hold of the last page too.
            released.append(session.items[:cut] if contexts else session.items)
            session.items = session.items[cut:]
            session.positions = PositionIndex()
            session.history_complete = False
            session.context_held = contexts
            session.held_from += cut
            kept += len(session.items)
        if not released:
            return
        count = sum(len(items) for items in released)
        log.info(
            "conversation %s: history released from memory (%d items, %d kept%s)",
            self.conv.conversation_id,
            count,
            kept,
            ": the contexts" if contexts else "",
        )
        sessions = list(self.conv.sessions.values())
        warmup.forget(self.conv.runtime, sessions, released, contexts_kept=contexts)
        # Freed beside the loop (the loop would stall for as long as that takes).
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a unit test): nothing else to stall
            _free(released)
            return
        self.freeing = loop.run_in_executor(None, _free, released)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
