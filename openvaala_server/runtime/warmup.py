"""A history read back from disk, made ready for its first model call without stalling anyone
(docs/design.md, "Performance at scale", issue 17 point 4).

Two things make the first request after an open slower than the ones after it: the usage
estimate of every item (counted once, then remembered, `domain/usage.estimate_finished`) and the
provider's assembly of the context (each item's wire form, `models/http.WireCache`, and the
session's assembled prefix, `models/assembly.py`). Both are done here as soon as the history is
in memory, before anyone asks: the estimates in a worker thread (pure work on finished items; the
loop only looks them up afterwards), the assembly on the loop in small steps (the provider's
caches are not shared with threads), between which every other client is served. The first
request then assembles only what was appended since: it costs what the later ones cost.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from openvaala_server.domain.records import Item
from openvaala_server.domain.usage import estimate_finished
from openvaala_server.models.assembly import Assembler
from openvaala_server.models.base import ModelRequest
from openvaala_server.runtime import contexts

if TYPE_CHECKING:
    from openvaala_server.runtime.ports import Conversation, Models
    from openvaala_server.runtime.session import LiveSession

log = logging.getLogger(__name__)

STEP = 500  # items assembled per step on the loop (~1 ms)


def estimate_all(items: list[Item]) -> None:
    """Remember the estimate of every finished item (run in a worker thread)."""
    for item in items:
        estimate_finished(item)


def assembler_of(runtime: Models, session: LiveSession) -> Assembler[Any, Any] | None:
    """The assembler of the provider the session's next request goes to, if it keeps one."""
    if session.model not in runtime.config.models:
        return None
    try:
        provider = runtime.provider(session.model)
    except Exception:  # a model that cannot be used now: nothing to prepare
        return None
    assembler = getattr(provider, "assembler", None)
    return assembler if isinstance(assembler, Assembler) else None


async def prepare(conv: Conversation, session: LiveSession) -> None:
    """Assemble the session's context for its provider, a step at a time: its prefix, up to the
    last user message, and the wire form of every item after it.

    Stops when the history changes meanwhile: replaced (let go of memory, or reloaded), what it
    assembled after that would keep items alive that nobody holds any more; appended to (a turn
    started), the turn's request assembles the rest itself (`catch_up`), from a newer context
    this one must not take the prefix back to."""
    assembler = assembler_of(conv.runtime, session)
    if assembler is None:
        return
    items, length = session.items, len(session.items)

    def changed() -> bool:
        return session.items is not items or len(items) != length

    context = contexts.model_context(conv, session)
    # The images' data is read by the request (runtime/images.py): the prefix stops before the
    # first item with images, and the request's `catch_up` assembles the rest with their data.
    end = assembler.prepare(session, context, None, 0)  # as far as it was assembled already
    for upto in range(end + STEP, len(context) + STEP, STEP):
        if changed():
            return
        end = assembler.prepare(session, context, None, upto)
        await asyncio.sleep(0)
    for start in range(end, len(context), STEP):  # the wire forms of the items after it
        if changed():
            return
        assembler.cache.wire(context[start : start + STEP])
        await asyncio.sleep(0)


async def catch_up(provider: object, request: ModelRequest) -> None:
    """Assemble what the request's owner has not assembled yet, a step at a time, before the
    request is built: a history read back after a release (which no warm-up prepares), the
    context after a compaction, a request that comes before the warm-up is done. Done in one go
    by the request, that would stall every other client for as long; nothing when the prefix
    already reaches the last steps."""
    assembler = getattr(provider, "assembler", None)
    owner = request.owner
    if not isinstance(assembler, Assembler) or owner is None:
        return
    items, images = request.items, request.images
    end = assembler.prepare(owner, items, images, 0)
    for upto in range(end + STEP, len(items), STEP):
        assembler.prepare(owner, items, images, upto)
        await asyncio.sleep(0)


async def prepare_all(conv: Conversation, sessions: list[LiveSession]) -> None:
    for session in sessions:
        try:
            await prepare(conv, session)
        except Exception:  # only a head start: the request assembles what is missing
            log.exception("preparing the wire form of a history failed")


def forget(
    runtime: Models,
    sessions: list[LiveSession],
    released: list[list[Item]],
    *,
    contexts_kept: bool = False,
) -> None:
    """The histories `released` were let go: drop what the providers hold of them too — every
    kept provider's, since a session that changed model left a prefix with its earlier one.
    With `contexts_kept` the sessions kept their contexts (runtime/residency.py): their
    prefixes, made of those, stay assembled."""
    kept = (getattr(p, "assembler", None) for p in runtime.kept_providers())
    current = (assembler_of(runtime, s) for s in sessions)
    assemblers = {id(a): a for a in (*kept, *current) if isinstance(a, Assembler)}
    for assembler in assemblers.values():
        for items in released:
            assembler.forget(items)
        for session in () if contexts_kept else sessions:
            assembler.drop(session)
    for session in sessions:
        contexts.forget(session)  # its memo holds the list it was computed from
