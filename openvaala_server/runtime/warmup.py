"""A history read back from disk, made ready for its first model call without stalling anyone
(docs/design.md, "Performance at scale", issue 17 point 4).

Two things make the first request after an open slower than the ones after it: the usage
estimate of every item (counted once, then remembered, `domain/usage.estimate_finished`) and the
provider's wire form of every item (converted once, then kept, `models/http.WireCache`). Both are
done here as soon as the history is in memory, before anyone asks: the estimates in a worker
thread (pure work on finished items; the loop only looks them up afterwards), the wire forms on
the loop in small steps (the cache is not shared with threads), between which every other client
is served. The first request then costs what the later ones cost.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from openvaala_server.domain.records import Item
from openvaala_server.domain.usage import estimate_finished
from openvaala_server.models.http import WireCache
from openvaala_server.runtime import context_view

if TYPE_CHECKING:
    from openvaala_server.runtime.ports import Conversation, Services
    from openvaala_server.runtime.session import LiveSession

log = logging.getLogger(__name__)

STEP = 500  # items converted per step on the loop (~1 ms)


def estimate_all(items: list[Item]) -> None:
    """Remember the estimate of every finished item (run in a worker thread)."""
    for item in items:
        estimate_finished(item)


def wire_cache_of(runtime: Services, session: LiveSession) -> WireCache[object] | None:
    """The wire cache of the provider the session's next request goes to, if it keeps one."""
    if session.model not in runtime.config.models:
        return None
    try:
        provider = runtime.provider(session.model)
    except Exception:  # a model that cannot be used now: nothing to prepare
        return None
    cache = getattr(provider, "wire_cache", None)
    return cache if isinstance(cache, WireCache) else None


async def fill_wire_cache(conv: Conversation, session: LiveSession) -> None:
    """Convert the session's context into its provider's wire cache, a step at a time.

    Stops when the history is replaced meanwhile (let go of memory, or reloaded): what it
    converted after that would keep items alive that nobody holds any more."""
    cache = wire_cache_of(conv.runtime, session)
    if cache is None:
        return
    items = session.items
    context = context_view.model_context(conv, session)[-cache.generation :]
    for start in range(0, len(context), STEP):
        if session.items is not items:
            return
        cache.wire(context[start : start + STEP])
        await asyncio.sleep(0)


async def fill_wire_caches(conv: Conversation, sessions: list[LiveSession]) -> None:
    for session in sessions:
        try:
            await fill_wire_cache(conv, session)
        except Exception:  # only a head start: the request converts what is missing
            log.exception("preparing the wire form of a history failed")


def forget(runtime: Services, sessions: list[LiveSession], released: list[list[Item]]) -> None:
    """The histories `released` were let go: drop their providers' cache entries too."""
    caches = {id(c): c for s in sessions if (c := wire_cache_of(runtime, s))}
    for cache in caches.values():
        for items in released:
            cache.forget(items)
