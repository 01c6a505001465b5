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
from openvaala_server.domain.context import KEEP_RATIO, context_items, split_point
from openvaala_server.models.base import ModelError, ModelRequest, TextDelta
from openvaala_server.models.retry import RetryPolicy
from openvaala_server.runtime.conversation import LiveConversation, new_item
from openvaala_server.runtime.session import LiveSession

log = logging.getLogger(__name__)

COMPACT_INSTRUCTIONS = (
    "You write the working memory of a coding agent. Summarize the conversation you are given so "
    "the agent can continue without it: the user's goals and constraints, decisions made and why, "
    "files and commands involved, results of tool calls that still matter, open questions and the "
    "next steps. If the conversation starts with an earlier summary, fold it into yours: your "
    "summary replaces it. Be concise and concrete; keep exact names, paths and numbers."
)
COMPACT_REQUEST = "Summarize the conversation above, following your instructions."


class CompactionFailed(errors.OpenVaalaError):
    code, kind = -32012, "compaction_failed"


async def compact(
    conv: LiveConversation,
    session: LiveSession,
    reason: str,
    *,
    turn_id: str | None = None,
    keep_ratio: float = KEEP_RATIO,
) -> r.Item | None:
    """Summarize the older part of `session`'s context. Returns the summary item, or None when
    the history is too short to have an older part."""
    runtime = conv.runtime
    config = runtime.config_for(session)  # a running turn's, if one runs
    model = runtime.model_config(session.model, config)
    agent = config.agents.get(session.agent)
    compact_name = (agent.compact_model if agent else None) or session.model
    compact_model = runtime.model_config(compact_name, config)
    current = context_items(session.items)
    earlier = current[:1] if current and current[0].get("type") == r.SUMMARY else []
    body = current[len(earlier) :]
    cut = split_point(body, model.context_window, keep_ratio)
    if cut == 0:
        return None
    covered = body[:cut]
    sid = session.session_id
    conv.hub.publish("compaction/started", {"sessionId": sid, "reason": reason})
    request = ModelRequest(
        model=compact_model,
        instructions=COMPACT_INSTRUCTIONS,
        items=[
            *earlier,
            *covered,
            new_item(r.USER_MESSAGE, sid, turn_id, status=r.COMPLETED, text=COMPACT_REQUEST),
        ],
        purpose="compaction",
    )
    try:
        text = await _summarize(conv, session, compact_name, request)
    except ModelError as exc:
        message = f"compaction failed: {exc.message}"
        conv.hub.publish(
            "compaction/failed",
            {"sessionId": sid, "reason": reason, "error": {"kind": exc.kind, "message": message}},
        )
        raise CompactionFailed(message) from None
    except asyncio.CancelledError:
        # Interrupted: nothing changed, and clients learn the compaction is over.
        error = {"kind": "interrupted", "message": "compaction interrupted"}
        conv.hub.publish("compaction/failed", {"sessionId": sid, "reason": reason, "error": error})
        raise
    summary = new_item(
        r.SUMMARY,
        sid,
        turn_id,
        status=r.COMPLETED,
        text=text,
        coversUpTo=covered[-1]["itemId"],
        coveredItems=len(covered) + len(earlier),
        reason=reason,
        model=compact_name,
    )
    await conv.persist_items(session, [summary], count_in_usage=False, publish_usage=False)
    session.agents_md = None  # AGENTS.md is read again for the compacted context
    conv.refresh_usage_estimate(session)
    conv.publish_usage(session)
    conv.hub.publish(
        "compaction/completed",
        {"sessionId": sid, "reason": reason, "summaryItemId": summary["itemId"]},
    )
    return summary


async def _summarize(
    conv: LiveConversation, session: LiveSession, model_name: str, request: ModelRequest
) -> str:
    runtime = conv.runtime
    config = runtime.config_for(session)
    policy = RetryPolicy.from_config(config.retry)
    provider = runtime.provider(model_name, config)
    attempt = 0
    while True:
        attempt += 1
        parts: list[str] = []
        try:
            async for event in provider.stream(request):
                if isinstance(event, TextDelta):
                    parts.append(event.text)
        except ModelError as exc:
            if not policy.should_retry(exc, attempt):
                raise
            delay = policy.delay(attempt, exc.retry_after)
            conv.hub.publish(
                "retry/scheduled",
                {
                    "sessionId": session.session_id,
                    "attempt": attempt,
                    "maxAttempts": policy.max_attempts,
                    "delaySeconds": round(delay, 3),
                    "error": {"kind": exc.kind, "message": exc.message},
                },
            )
            await asyncio.sleep(delay)
            continue
        text = "".join(parts).strip()
        if not text:
            raise ModelError("bad_response", "the compact model returned an empty summary")
        return text
