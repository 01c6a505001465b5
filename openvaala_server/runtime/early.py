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
from dataclasses import dataclass

from openvaala_server.domain import records as r
from openvaala_server.domain.context import KEEP_RATIO, latest_summary_index, should_compact
from openvaala_server.models.base import ModelError
from openvaala_server.protocol import methods
from openvaala_server.runtime import context_view
from openvaala_server.runtime.compaction import Plan, commit, compact, compaction_request, plan
from openvaala_server.runtime.compaction import summarize as summarize_call
from openvaala_server.runtime.conversation import LiveConversation, new_item
from openvaala_server.runtime.session import LiveSession

log = logging.getLogger(__name__)


@dataclass
class Prepared:
    """A summary written in the background, not yet in the history."""

    plan: Plan
    text: str
    model: str
    summary_id: str | None  # the persisted summary it folds in (the latest when prepared)

    @property
    def covers_up_to(self) -> str:
        return str(self.plan.covered[-1]["itemId"])


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


async def before_call(
    conv: LiveConversation, session: LiveSession, turn_id: str, *, first_call: bool
) -> None:
    """Compact before a model call when the context reaches the threshold (or, at a turn's first
    call, when `refresh_every` replies have passed), using a summary prepared early if one fits."""
    context_view.sync_usage(conv, session)
    usage = session.usage
    over = should_compact(
        usage.used, usage.context_window, usage.max_output_tokens, usage.compact_fraction
    )
    refresh = first_call and context_view.replies_until_refresh(conv, session) == 0
    if not (over or refresh):
        return
    task = session.preparing
    if task is not None and not task.finished:
        # Nearly done, most likely: waiting costs less than starting over (a waiter cancelled
        # stops waiting; the preparation is the runtime's, as below).
        await task.wait()
    prepared = session.prepared
    if isinstance(prepared, Prepared) and _usable(conv, session, prepared):
        reason = "refresh" if refresh and not over else "auto"
        conv.hub.publish(
            methods.COMPACTION_STARTED, {"sessionId": session.session_id, "reason": reason}
        )
        await commit(
            conv,
            session,
            prepared.plan,
            prepared.text,
            reason,
            turn_id=turn_id,
            model=prepared.model,
            early=True,
        )
        over = should_compact(
            usage.used, usage.context_window, usage.max_output_tokens, usage.compact_fraction
        )
        if not over:
            return
        refresh = False
    if over:
        await compact(conv, session, "auto", turn_id=turn_id)
    elif refresh:
        await compact(conv, session, "refresh", turn_id=turn_id, keep_ratio=0.0)


def maybe_prepare(conv: LiveConversation, session: LiveSession) -> None:
    """As a session goes idle: prepare (or extend) a summary in the background if its context
    passed `early_compaction`, or a refresh is due."""
    runtime = conv.runtime
    if runtime.shutting_down or session.turn is not None or session.compacting:
        return
    if session.preparing is not None or not session.history_complete or conv.meta is None:
        return
    early = context_view.early_threshold(conv, session)
    if early is None or early <= 0:
        return
    refresh = context_view.replies_until_refresh(conv, session) == 0
    if session.usage.used < early and not refresh:
        return
    if not runtime.tasks.running:
        return

    async def prepare() -> None:
        try:
            await _prepare(conv, session, refresh)
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


async def _prepare(conv: LiveConversation, session: LiveSession, refresh: bool) -> None:
    keep = 0.0 if refresh else KEEP_RATIO
    todo = plan(conv, session, keep)
    if todo is None:
        return
    summary_id = _latest_summary_id(session)
    old = session.prepared
    sid = session.session_id
    items = [*todo.earlier, *todo.covered]
    if isinstance(old, Prepared) and _usable(conv, session, old):
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
