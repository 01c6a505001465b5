"""Reading a session's history by pages (conversation/read): from memory when it is all
loaded, else from the held tail and the journal (docs/design.md "Performance at scale",
"Runtime split by responsibility")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openvaala_server import errors
from openvaala_server.domain.joined import list_page
from openvaala_server.runtime import history, residency
from openvaala_server.store.paths import NotFound as StoreNotFound

if TYPE_CHECKING:
    from openvaala_server.domain import records as r
    from openvaala_server.protocol import payloads as p
    from openvaala_server.runtime.conversation import LiveConversation
    from openvaala_server.runtime.session import LiveSession

Owner = history.Manager


async def read(
    runtime: Owner, cid: str, sid: str | None, before: str | None, limit: int
) -> p.ReadResult:
    conv = await runtime.open(cid)
    session = conv.session(sid)
    conv.residency.read()  # the next page may follow: keep the history a while
    joins_original = session.session_id == conv.root_session_id and _has_older_history(conv)
    if not joins_original:
        if session.history_complete:
            return _page_of(session, before, limit)
        # Partly loaded (just opened, or let go): the held tail and the journal answer it,
        # without waiting for the whole history (docs/design.md "Performance at scale").
        page = await read_partial(runtime, conv, session, before, limit)
        if page is not None:
            return page
    await conv.ensure_history()
    if joins_original:  # a fork's history joined with its original's
        return await history.root_page(runtime, conv, before, limit)
    return _page_of(session, before, limit)


async def read_partial(
    runtime: Owner, conv: LiveConversation, session: LiveSession, before: str | None, limit: int
) -> p.ReadResult | None:
    """A page of a partly loaded history from its held tail and its journal; None when
    the journal cannot say (an item it does not find): then the whole history decides."""
    split = residency.split_page(session, before, limit)
    if split is None:
        return None
    if split.count == 0:
        return {"items": split.held, "hasMore": True}  # more lies before the held tail
    try:
        older, more = await runtime.store_call(
            journal_page(runtime, conv.conversation_id, session.session_id, split)
        )
    except _NoSuchItem:
        return None
    return {"items": [*older, *split.held], "hasMore": more}


async def journal_page(
    runtime: Owner, cid: str, sid: str, split: residency.Split
) -> tuple[list[r.Item], bool]:
    try:
        return await runtime.store.read_items(cid, sid, before_item=split.before, limit=split.count)
    except StoreNotFound:
        raise _NoSuchItem from None


class _NoSuchItem(Exception):
    """The journal has no such item (store_call would make the store's NotFound a failure)."""


def _has_older_history(conv: LiveConversation) -> bool:
    """A fork made after a compaction: its root's older items are its original's."""
    forked = conv.meta.forked_from if conv.meta else None
    return bool(forked and forked.get("olderHistory"))


def _page_of(session: LiveSession, before: str | None, limit: int) -> p.ReadResult:
    """The last `limit` items of the session's history before the item `before` (the end
    without one), found by its position index: the same at any length."""
    page = list_page(session.items, before, limit, session.positions)
    if page is None:
        raise errors.NotFound(f"no item {before} in this session", param="beforeItem")
    return {"items": page.items, "hasMore": page.has_more}
