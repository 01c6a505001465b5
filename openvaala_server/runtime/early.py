"""Compaction before a model call, and early compaction (docs/configuration.md `compact_threshold`,
`early_compaction`, `refresh_every`).

From `early_compaction` on, the summary is prepared in the background while the session waits for
the user; it stays in memory (`LiveSession.prepared`) until a model call reaches the threshold,
which then persists it without calling the model. New items since (a stale summary) are folded in
by extending it — the prepared summary plus the newer items to summarize — at the next idle
moment; a new pin or a new persisted summary makes it redone. Its cost shows in usage like every
compaction's (`compaction` of the usage).
"""

from __future__ import annotations

import logging

from openvaala_server.domain import records as r
from openvaala_server.domain.compaction_policy import ContextState, Decision, Prepared, decide
from openvaala_server.domain.context import latest_summary_index
from openvaala_server.models.base import ModelError
from openvaala_server.protocol import methods
from openvaala_server.runtime import context_view
from openvaala_server.runtime.compaction import commit, compact, compaction_request, plan
from openvaala_server.runtime.compaction import summarize as summarize_call
from openvaala_server.runtime.conversation import LiveConversation
from openvaala_server.runtime.item_factory import new_item
from openvaala_server.runtime.session import LiveSession

log = logging.getLogger(__name__)


def _latest_summary_id(session: LiveSession) -> str | None:
    at = latest_summary_index(session.items)
    return str(session.items[at]["itemId"]) if at is not None else None


def _usable(conv: LiveConversation, session: LiveSession, prepared: Prepared) -> bool:
    """Still a summary of the current context: same summary folded in, same pins, and the item
    it ends with still in the history."""
    if prepared.summary_id != _latest_summary_id(session):
        return False
    if tuple(conv.pinned(session)) != prepared.plan.pinned:
        return False
    return any(i["itemId"] == prepared.covers_up_to for i in session.items)


def context_state(conv: LiveConversation, session: LiveSession) -> ContextState:
    """The numbers the compaction decision reads (domain/compaction_policy.py)."""
    context_view.sync_usage(conv, session)
    u = session.usage
    return ContextState(
        used=u.used,
        context_window=u.context_window,
        max_output_tokens=u.max_output_tokens,
        compact_fraction=u.compact_fraction,
        early_threshold=context_view.early_threshold(conv, session),
        replies_until_refresh=context_view.replies_until_refresh(conv, session),
    )


async def before_call(
    conv: LiveConversation, session: LiveSession, turn_id: str, *, first_call: bool
) -> None:
    """Compact before a model call when the decision says so, using a summary prepared early if
    one fits."""
    decision = decide("before_call", context_state(conv, session), first_call=first_call)
    if decision.action != "compact":
        return
    task = session.preparing
    if task is not None and not task.finished:
        # Nearly done, most likely: waiting costs less than starting over (a waiter cancelled
        # stops waiting; the preparation is the runtime's, as below).
        await task.wait()
    prepared = session.prepared
    if decision.use_prepared and prepared is not None and _usable(conv, session, prepared):
        conv.hub.publish(
            methods.COMPACTION_STARTED,
            {"sessionId": session.session_id, "reason": decision.reason},
        )
        await commit(
            conv,
            session,
            prepared.plan,
            prepared.text,
            decision.reason,
            turn_id=turn_id,
            model=prepared.model,
            early=True,
        )
        # The refresh it stood for is done; the threshold may still be reached.
        decision = decide("before_call", context_state(conv, session), first_call=False)
        if decision.action != "compact":
            return
    await compact(conv, session, decision.reason, turn_id=turn_id, keep_ratio=decision.keep_ratio)


def maybe_prepare(conv: LiveConversation, session: LiveSession) -> None:
    """As a session goes idle: prepare (or extend) a summary in the background when the
    decision says so."""
    runtime = conv.runtime
    busy = (
        runtime.shutting_down
        or session.turn is not None
        or session.compacting
        or session.preparing is not None
        or not session.context_ready
        or conv.meta is None
        or not runtime.tasks.running
    )
    if busy:
        return
    decision = decide("idle", context_state(conv, session), busy=busy)
    if decision.action != "prepare":
        return

    async def prepare() -> None:
        try:
            await _prepare(conv, session, decision)
        finally:
            _prepared(conv, session)

    # An activity of the runtime's supervisor: shutdown cancels it and waits for it
    # (docs/design.md, "Structured concurrency").
    session.preparing = runtime.tasks.spawn(prepare, f"early-compaction-{session.session_id}")


def _prepared(conv: LiveConversation, session: LiveSession) -> None:
    session.preparing = None
    conv.publish_usage(session)
    conv.residency.check()  # it held the history; nobody else may (runtime/residency.py)


def cancel(session: LiveSession) -> None:
    task = session.preparing
    if task is not None and not task.finished:
        task.cancel()


async def _prepare(conv: LiveConversation, session: LiveSession, decision: Decision) -> None:
    todo = plan(conv, session, decision.keep_ratio)
    if todo is None:
        return
    summary_id = _latest_summary_id(session)
    old = session.prepared
    sid = session.session_id
    items = [*todo.earlier, *todo.covered]
    if old is not None and _usable(conv, session, old):
        ids = [i["itemId"] for i in todo.covered]
        if old.covers_up_to in ids:
            newer = todo.covered[ids.index(old.covers_up_to) + 1 :]
            if not newer:
                return  # still fresh
            # Extend: the prepared summary stands for what it covers.
            as_summary = new_item(r.SUMMARY, sid, None, status=r.COMPLETED, text=old.text)
            items = [as_summary, *newer]
    conv.publish_usage(session)
    request = compaction_request(conv, session, items, None)
    try:
        text = await summarize_call(conv, session, request)
    except ModelError as exc:
        log.warning("early compaction failed (the turn will compact instead): %s", exc.message)
        return
    session.prepared = Prepared(todo, text, request.model.name, summary_id)
