"""Context a user can see and steer: the trace of the next request, pins, what a summary replaced,
the gauge's figures. The runtime side of docs/protocol.md "Context"; the pure parts are
domain/trace.py and domain/context.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from openvaala_server import errors, prompts
from openvaala_server.config_prompt import BaseInstructions
from openvaala_server.domain import records as r
from openvaala_server.domain.context import (
    KEEP_RATIO,
    SinceSummary,
    context_items,
    since_summary,
)
from openvaala_server.domain.environment import environment_text, limits_sentence
from openvaala_server.domain.instructions import assemble
from openvaala_server.domain.tool_names import SPAWN_AGENT
from openvaala_server.domain.trace import INSTRUCTION_KINDS, InstructionPart, Trace, trace
from openvaala_server.domain.usage import early_start, estimate_item, threshold
from openvaala_server.mcp.manager import last_listed
from openvaala_server.models.base import ModelRequest
from openvaala_server.protocol import methods
from openvaala_server.protocol import payloads as wire
from openvaala_server.runtime.agent_chain import effective_tools
from openvaala_server.tools.history import HistoryView, SearchHistoryTool, offers_search

if TYPE_CHECKING:
    from openvaala_server.runtime.ports import Conversation
    from openvaala_server.runtime.session import LiveSession
    from openvaala_server.tools.base import Tool

PINNABLE = (r.USER_MESSAGE, r.AGENT_MESSAGE)


# -- what the next request holds -------------------------------------------------------------


def instruction_parts(conv: Conversation, session: LiveSession) -> list[InstructionPart]:
    """The system prompt in its parts (domain/instructions.py); joined, they are exactly the
    request's instructions."""
    runtime = conv.runtime
    config = runtime.config_for(session)
    agent = config.agents.get(session.agent)
    model = config.models.get(session.model)
    base = agent.base_instructions if agent else BaseInstructions()
    if base.text is None:
        family = prompts.family_of(model.provider, model.model) if model else "default"
        base_part = (f"Base prompt (built-in, {family})", prompts.base_prompt(family))
    else:
        base_part = (f"Base prompt ({base.source})", base.text)
    own = (f"Agent instructions ({session.agent})", agent.instructions if agent else "")
    # Gathered off the event loop by `conv.load_surroundings`, which a model call awaits first;
    # until then (an estimate right after opening) the request is counted without them.
    found = session.surroundings
    if found is None:
        return assemble(base_part, own, "", None, (), (), 0)
    perms = runtime.permissions_for(conv, session)
    limits = limits_sentence(perms, perms.network or perms.sandbox == "off")
    tools = effective_tools(config, conv.sessions, session)  # what the chain gives it
    spawnable = (
        [(a.name, a.description) for a in config.agents.values()]
        if SPAWN_AGENT in tools and session.depth < config.subagents.max_depth
        else []
    )
    environment = environment_text(found.facts, limits, spawnable, session.agent)
    return assemble(
        base_part,
        own,
        environment,
        found.user_doc,
        found.project_docs,
        found.memories,
        config.project_docs.max_chars,
    )


def pinned(conv: Conversation, session: LiveSession) -> list[str]:
    meta = conv.meta
    return list(meta.pins.get(session.session_id, ())) if meta is not None else []


def model_context(conv: Conversation, session: LiveSession) -> list[r.Item]:
    return context_items(session.items, pinned(conv, session))


def trace_of(conv: Conversation, session: LiveSession) -> Trace:
    runtime = conv.runtime
    model = runtime.config_for(session).models.get(session.model)
    tools = runtime.tools_for(conv, session).values()
    return trace(
        instruction_parts(conv, session),
        [tool.spec for tool in tools],
        session.items,
        model_context(conv, session),
        pinned=set(pinned(conv, session)),
        last_known={t.spec.name for t in tools if last_listed(t)},
        provider=model.provider if model else "",
        reported_context=session.reasoning_context,
        configured_context=model.reasoning_context if model else None,
    )


def request_body(conv: Conversation, session: LiveSession) -> dict[str, Any] | None:
    """The exact JSON body the provider would be sent next ("copy as JSON"); None for a
    provider without one (demo)."""
    runtime = conv.runtime
    config = runtime.config_for(session)
    model = runtime.model_config(session.model, config)
    provider = runtime.provider(session.model, config)
    build = getattr(provider, "build_body", None)
    if build is None:
        return None
    request = ModelRequest(
        model=model,
        instructions=conv.instructions_for(session),
        items=model_context(conv, session),
        tools=[t.spec for t in runtime.tools_for(conv, session).values()],
    )
    body: dict[str, Any] = build(request)
    return body


async def context_result(
    conv: Conversation, session: LiveSession, include_body: bool
) -> wire.ContextTrace:
    await conv.ensure_history()
    await conv.load_surroundings(session)
    traced = trace_of(conv, session)
    result: wire.ContextTrace = {
        "sessionId": session.session_id,
        "parts": traced["parts"],
        "total": traced["total"],
        "omitted": traced["omitted"],
        "usage": usage_wire(conv, session),
    }
    if include_body:
        result["body"] = request_body(conv, session)
    model = conv.runtime.config.models.get(session.model)
    if model is not None:
        result["windowSource"] = model.window_source
    return result


# -- the gauge -------------------------------------------------------------------------------


def sync_usage(conv: Conversation, session: LiveSession) -> None:
    """The agent's `compact_threshold` as the usage tracker applies it (read each time: the
    configuration may be reloaded, the agent changed)."""
    agent = conv.runtime.config_for(session).agents.get(session.agent)
    session.usage.compact_fraction = agent.compact_threshold if agent else None


def early_threshold(conv: Conversation, session: LiveSession) -> int | None:
    """The usage from which a summary is prepared while idle (domain/usage.early_start): the
    agent's `early_compaction`, moved up after a compaction by what that compaction left (the
    usage now less the items added since the latest summary)."""
    agent = conv.runtime.config_for(session).agents.get(session.agent)
    if agent is None or agent.early_compaction is None:
        return None
    u = session.usage
    early = threshold(u.context_window, u.max_output_tokens, agent.early_compaction)
    after = figures_since_summary(session).tokens
    if after is None:
        return early
    floor = max(0, u.used - after)
    return early_start(early, u.threshold, floor)


def figures_since_summary(session: LiveSession) -> SinceSummary:
    """Of the whole context: when only the last page is held, as it was let go."""
    if not session.context_ready and session.released_figures is not None:
        return session.released_figures
    return since_summary(session.items)


def replies_until_refresh(conv: Conversation, session: LiveSession) -> int | None:
    agent = conv.runtime.config_for(session).agents.get(session.agent)
    if agent is None or agent.refresh_every is None:
        return None
    return max(0, agent.refresh_every - figures_since_summary(session).replies)


def usage_wire(conv: Conversation, session: LiveSession) -> wire.Usage:
    sync_usage(conv, session)
    usage = session.usage.to_wire()
    agent = conv.runtime.config_for(session).agents.get(session.agent)
    early = early_threshold(conv, session)
    if early is not None:
        state: Literal["idle", "preparing", "ready"] = "idle"
        if session.preparing is not None:
            state = "preparing"
        elif session.prepared:
            state = "ready"
        usage["earlyCompaction"] = {"threshold": early, "state": state}
    until = replies_until_refresh(conv, session)
    if agent is not None and agent.refresh_every is not None and until is not None:
        usage["refreshEvery"] = agent.refresh_every
        usage["repliesUntilRefresh"] = until
    return usage


# -- pins ------------------------------------------------------------------------------------


def _find(session: LiveSession, item_id: str) -> r.Item:
    for item in session.items:
        if item["itemId"] == item_id:
            return item
    raise errors.NotFound(f"no item {item_id} in this session's history", param="itemId")


def pin_budget(conv: Conversation, session: LiveSession) -> int:
    """How many tokens the pinned items may take together: what the threshold leaves once the
    system prompt (all its parts), the tool schemas and the recent part compaction keeps are in."""
    sync_usage(conv, session)
    u = session.usage
    limit = u.threshold or (u.context_window - u.max_output_tokens)
    fixed = sum(
        p["tokens"]
        for p in trace_of(conv, session)["parts"]
        if p["kind"] in (*INSTRUCTION_KINDS, "tools")
    )
    return limit - fixed - int(u.context_window * KEEP_RATIO)


async def set_pinned(
    conv: Conversation, session: LiveSession, item_id: str, on: bool
) -> wire.PinResult:
    await conv.ensure_history()
    if conv.meta is None:
        raise errors.NotFound("this conversation has no messages yet: nothing to pin")
    item = _find(session, item_id)
    pins = pinned(conv, session)
    in_context = any(i["itemId"] == item_id for i in model_context(conv, session))
    if on and item_id not in pins:
        if item.get("type") not in PINNABLE:
            raise errors.InvalidParams(
                "only messages can be pinned (a user's or the agent's)", param="itemId"
            )
        if item.get("status") != r.COMPLETED:
            raise errors.InvalidParams("only a finished message can be pinned", param="itemId")
        by_id = {i["itemId"]: i for i in session.items}
        tokens = sum(estimate_item(by_id[p]) for p in pins if p in by_id) + estimate_item(item)
        budget = pin_budget(conv, session)
        if tokens > budget:
            raise errors.PinRefused(
                f"this pin would not fit: pinned items would take about {tokens} tokens, and "
                f"the context leaves {max(0, budget)} for pins (the compaction threshold less "
                "the system prompt, the tools and the recent part compaction keeps). Unpin "
                "something, or pin a shorter message.",
                tokens=tokens,
                budget=max(0, budget),
            )
        await conv.append_meta(
            {"type": r.ITEM_PINNED, "sessionId": session.session_id, "itemId": item_id}
        )
    elif not on and item_id in pins:
        await conv.append_meta(
            {"type": r.ITEM_UNPINNED, "sessionId": session.session_id, "itemId": item_id}
        )
    else:
        return {"pinned": pinned(conv, session), "changed": False}
    session.prepared = None  # a summary prepared early may have summarized it
    publish_pins(conv, session)
    if in_context != any(i["itemId"] == item_id for i in model_context(conv, session)):
        # It came back after the summary, or left: the provider's last report no longer holds.
        conv.refresh_usage_estimate(session)
    conv.publish_usage(session)
    return {"pinned": pinned(conv, session), "changed": True}


def publish_pins(conv: Conversation, session: LiveSession) -> None:
    conv.hub.publish(
        methods.PINS_UPDATED, {"sessionId": session.session_id, "itemIds": pinned(conv, session)}
    )


async def copy_pins(source: Conversation, new: Conversation) -> None:
    """A fork keeps the pins of the items it copied (docs/protocol.md)."""
    pins = pinned(source, source.root)
    await new.ensure_history()  # just opened: only its last page is held yet
    copied = {i["itemId"] for i in new.root.items}
    records: list[r.ItemPinned] = [
        {"type": r.ITEM_PINNED, "sessionId": new.root_session_id, "itemId": p}
        for p in pins
        if p in copied
    ]
    if records:
        await new.append_meta(*records)


# -- what a summary replaced -----------------------------------------------------------------


def replaced_by(history: list[r.Item], summary_id: str) -> wire.ReplacedResult:
    """The items a summary replaced: from its `replacesFrom` (or the end of the summary before
    it) to its `coversUpTo`, without summaries and the pinned items it kept verbatim."""
    at = next((i for i, it in enumerate(history) if it["itemId"] == summary_id), None)
    if at is None or history[at].get("type") != r.SUMMARY:
        raise errors.NotFound(f"no summary {summary_id} in this history", param="summaryItemId")
    summary = history[at]
    ids = [i["itemId"] for i in history]
    end_id = summary.get("coversUpTo")
    end = ids.index(end_id) if end_id in ids else -1
    start_id = summary.get("replacesFrom")
    if start_id in ids:
        start = ids.index(start_id)
    else:  # a summary written before `replacesFrom` existed: after the previous one's end
        start = 0
        for earlier in history[:at]:
            if earlier.get("type") == r.SUMMARY and earlier.get("coversUpTo") in ids:
                start = max(start, ids.index(earlier["coversUpTo"]) + 1)
    kept = set(summary.get("keptPinned") or ())
    items = [
        i
        for i in history[start : end + 1]
        if i.get("type") != r.SUMMARY and i["itemId"] not in kept
    ]
    return {
        "summaryItemId": summary_id,
        "fromItemId": items[0]["itemId"] if items else None,
        "toItemId": end_id,
        "replacesSummary": summary.get("replacesSummary"),
        "keptPinned": sorted(kept),
        "itemIds": [i["itemId"] for i in items],
        "items": items,
    }


# -- recall ----------------------------------------------------------------------------------


def history_tools(
    conv: Conversation,
    session: LiveSession,
    root_history: Callable[[], Awaitable[list[r.Item]]],
) -> dict[str, Tool]:
    """`search_history` for the root agent, when its agent lists it (the default).
    `root_history` reads the root's whole history (runtime/history.py)."""
    agent = conv.runtime.config_for(session).agents.get(session.agent)
    if agent is None or not offers_search(agent) or session.session_id != conv.root_session_id:
        return {}
    runtime = conv.runtime

    async def search(query: str, limit: int) -> list[str]:
        await conv.ensure_history()
        history = await root_history()
        cids = list(
            dict.fromkeys(str(i.get("fromConversationId") or conv.conversation_id) for i in history)
        )
        if conv.conversation_id not in cids:
            cids.append(conv.conversation_id)
        return await runtime.store_call(runtime.store.search_messages(cids, query, limit))

    async def history() -> HistoryView:
        await conv.ensure_history()
        items = await root_history()
        seen = {i["itemId"] for i in model_context(conv, session)}
        turn = session.turn.turn_id if session.turn is not None else None
        asking = {i["itemId"] for i in items if i.get("turnId") == turn and i["itemId"] in seen}
        return HistoryView(items, seen, asking)

    tool = SearchHistoryTool(search, history)
    return {tool.spec.name: tool}
