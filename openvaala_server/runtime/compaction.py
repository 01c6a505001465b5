"""Compaction: one call to the compact model writes a cumulative summary of the older history.

The summary is a persisted `summary` item naming the last item it covers; nothing is deleted, and
every client keeps the full history. From then on the model sees the instructions (AGENTS.md read
again), the summary and the recent part. A failed compaction changes nothing and raises.
"""

from __future__ import annotations

import asyncio
import logging

from openvaala_server import errors
from openvaala_server.domain import records as r
from openvaala_server.domain.compaction_policy import CompactionPlan as Plan
from openvaala_server.domain.compaction_policy import Reason
from openvaala_server.domain.context import KEEP_RATIO, context_items, split_point
from openvaala_server.models.base import ModelError, ModelRequest, TextDelta, UsageReported
from openvaala_server.models.retry import RetryPolicy
from openvaala_server.protocol import methods
from openvaala_server.runtime.conversation import LiveConversation
from openvaala_server.runtime.item_factory import new_item
from openvaala_server.runtime.retrying import with_retries
from openvaala_server.runtime.session import LiveSession
from openvaala_server.tools.history import offers_search

log = logging.getLogger(__name__)

COMPACT_INSTRUCTIONS = (
    "You write the working memory of a coding agent. Summarize the conversation you are given so "
    "the agent can continue without it: the user's goals and constraints, decisions made and why, "
    "files and commands involved, results of tool calls that still matter, open questions and the "
    "next steps. If the conversation starts with an earlier summary, fold it into yours: your "
    "summary replaces it. Be concise and concrete; keep exact names, paths and numbers."
)
SEARCH_HINT = (
    " The agent has a search_history tool that finds older messages of this conversation, these "
    "included, by their words: a detail you leave out can still be looked up."
)
COMPACT_REQUEST = "Summarize the conversation above, following your instructions."


def plan(conv: LiveConversation, session: LiveSession, keep_ratio: float) -> Plan | None:
    """The older part of `session`'s context to summarize, or None when there is none."""
    model = conv.runtime.model_config(session.model, conv.runtime.config_for(session))
    pins = tuple(conv.pinned(session))
    current = context_items(session.items, pins)
    earlier = current[:1] if current and current[0].get("type") == r.SUMMARY else []
    body = [i for i in current[len(earlier) :] if i.get("itemId") not in pins]
    cut = split_point(body, model.context_window, keep_ratio)
    if cut == 0:
        return None
    return Plan(earlier, body[:cut], pins)


def compaction_request(
    conv: LiveConversation, session: LiveSession, items: list[r.Item], turn_id: str | None
) -> ModelRequest:
    agent = conv.runtime.config_for(session).agents.get(session.agent)
    compact_name = (agent.compact_model if agent else None) or session.model
    instructions = COMPACT_INSTRUCTIONS
    if agent is not None and session.session_id == conv.root_session_id and offers_search(agent):
        instructions += SEARCH_HINT
    return ModelRequest(
        model=conv.runtime.model_config(compact_name, conv.runtime.config_for(session)),
        instructions=instructions,
        items=[
            *items,
            new_item(
                r.USER_MESSAGE,
                session.session_id,
                turn_id,
                status=r.COMPLETED,
                text=COMPACT_REQUEST,
            ),
        ],
        purpose="compaction",
    )


async def compact(
    conv: LiveConversation,
    session: LiveSession,
    reason: Reason,
    *,
    turn_id: str | None = None,
    keep_ratio: float = KEEP_RATIO,
) -> r.Item | None:
    """Summarize the older part of `session`'s context. Returns the summary item, or None when
    the history is too short to have an older part."""
    todo = plan(conv, session, keep_ratio)
    if todo is None:
        return None
    sid = session.session_id
    conv.hub.publish(methods.COMPACTION_STARTED, {"sessionId": sid, "reason": reason})
    request = compaction_request(conv, session, [*todo.earlier, *todo.covered], turn_id)
    try:
        text = await summarize(conv, session, request)
    except ModelError as exc:
        message = f"compaction failed: {exc.message}"
        conv.hub.publish(
            methods.COMPACTION_FAILED,
            {"sessionId": sid, "reason": reason, "error": {"kind": exc.kind, "message": message}},
        )
        raise errors.CompactionFailed(message) from None
    except asyncio.CancelledError:
        # Interrupted: nothing changed, and clients learn the compaction is over.
        error: r.ErrorInfo = {"kind": "interrupted", "message": "compaction interrupted"}
        conv.hub.publish(
            methods.COMPACTION_FAILED, {"sessionId": sid, "reason": reason, "error": error}
        )
        raise
    return await commit(
        conv, session, todo, text, reason, turn_id=turn_id, model=request.model.name
    )


async def commit(
    conv: LiveConversation,
    session: LiveSession,
    todo: Plan,
    text: str,
    reason: Reason,
    *,
    turn_id: str | None,
    model: str,
    early: bool = False,
) -> r.Item:
    """Persist the summary of `todo` and switch the context to it."""
    sid = session.session_id
    covered = todo.covered
    first, last = covered[0]["itemId"], covered[-1]["itemId"]
    fields: dict[str, object] = {
        "text": text,
        "coversUpTo": last,
        "coveredItems": len(covered) + len(todo.earlier),
        "reason": reason,
        "model": model,
        # What this summary replaced (docs/protocol.md "What a summary replaced"): the items from
        # `replacesFrom` to `coversUpTo` but the pinned ones, and the summary it folded in.
        "replacesFrom": first,
        "replacedItems": len(covered),
        "keptPinned": [p for p in todo.pinned if _between(session.items, p, first, last)],
    }
    if todo.earlier:
        fields["replacesSummary"] = todo.earlier[0]["itemId"]
    if early:
        fields["early"] = True
    summary = new_item(r.SUMMARY, sid, turn_id, status=r.COMPLETED, **fields)
    await conv.persist_items(session, [summary], count_in_usage=False, publish_usage=False)
    session.surroundings = None  # AGENTS.md is read again for the compacted context
    session.surroundings_loading = None
    session.prepared = None
    conv.refresh_usage_estimate(session)
    conv.publish_usage(session)
    conv.hub.publish(
        methods.COMPACTION_COMPLETED,
        {"sessionId": sid, "reason": reason, "summaryItemId": summary["itemId"]},
    )
    return summary


def _between(items: list[r.Item], item_id: str, first: str, last: str) -> bool:
    inside = False
    for item in items:
        if item["itemId"] == first:
            inside = True
        if inside and item["itemId"] == item_id:
            return True
        if item["itemId"] == last:
            return False
    return False


async def summarize(conv: LiveConversation, session: LiveSession, request: ModelRequest) -> str:
    """One compaction call (retried on temporary errors); its cost goes into the usage."""
    runtime = conv.runtime
    config = runtime.config_for(session)
    policy = RetryPolicy.from_config(config.retry)
    provider = runtime.provider(request.model.name, config)

    async def once() -> str:
        parts: list[str] = []
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                parts.append(event.text)
            elif isinstance(event, UsageReported):
                session.usage.add_compaction_cost(event.input_tokens, event.output_tokens)
        text = "".join(parts).strip()
        if not text:  # not temporary: raised at once
            raise ModelError("bad_response", "the compact model returned an empty summary")
        return text

    return await with_retries(once, policy, conv.hub, session.session_id)
