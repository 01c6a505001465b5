"""The context trace: the next request of a session, in labelled parts with their estimated tokens.

What `conversation/context` answers (docs/protocol.md): the system prompt's parts (with their
text), the summary, the pinned items it kept verbatim, the recent history and the tool schemas,
each with its token estimate (domain/usage.py), plus what was left out of the request and why.
The sum of the parts is the session's usage estimate: the runtime computes that estimate with
this function, so the two cannot drift apart. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal, NotRequired, TypedDict, get_args

from openvaala_server.domain.context import (
    covered_start,
    reasoning_context,
    sent_items,
)
from openvaala_server.domain.records import REASONING, SUMMARY, Item
from openvaala_server.domain.usage import (
    ToolSchema,
    estimate_finished,
    estimate_text,
    estimate_tool,
)

# The parts of the system prompt (domain/instructions.py), in request order.
InstructionKind = Literal["base", "system", "environment", "user_md", "agents_md", "memory"]
PartKind = InstructionKind | Literal["summary", "pinned", "history", "tools"]
INSTRUCTION_KINDS: tuple[InstructionKind, ...] = get_args(InstructionKind)


class TracePart(TypedDict):
    kind: PartKind
    label: str
    tokens: int
    itemIds: NotRequired[list[str]]
    # A part of the system prompt: its text exactly as the request carries it.
    text: NotRequired[str]
    # Tools of MCP servers still starting (or failed), counted from their last listing.
    lastKnown: NotRequired[list[str]]


class Omitted(TypedDict):
    itemIds: list[str]
    reason: str


class Trace(TypedDict):
    parts: list[TracePart]
    total: int
    omitted: list[Omitted]


@dataclass(frozen=True)
class InstructionPart:
    """One piece of the system prompt as the request joins them (`text` includes its separator
    from the piece before, so the pieces' estimates add up to the prompt's)."""

    kind: InstructionKind
    label: str
    text: str


def trace(
    instructions: Sequence[InstructionPart],
    tools: Sequence[ToolSchema],
    history: Sequence[Item],
    context: Sequence[Item],
    *,
    pinned: Collection[str] = (),
    last_known: Collection[str] = (),
    provider: str,
    reported_context: str | None = None,
    configured_context: str | None = None,
) -> Trace:
    """The parts of the next request. `history` is the session's whole history in memory,
    `context` what `context_items(history, pinned)` made of it (the items the request sends).
    `last_known` names the tools offered from an MCP server's last listing while it starts."""
    parts = [_instruction_part(piece) for piece in instructions if piece.text]
    mode = reasoning_context(context, provider, reported_context, configured_context)
    sent = sent_items(context, provider, mode)
    summary = context[0] if context and context[0].get("type") == SUMMARY else None
    rest = sent[1:] if summary is not None and sent and sent[0] is summary else sent
    kept: list[Item] = []
    if summary is not None:
        parts.append(_items_part("summary", "Summary", [summary]))
        if pinned:  # the pinned items it covers come first, sent verbatim after it
            start = covered_start(history, summary)
            covered = {i.get("itemId") for i in history[:start] if i.get("itemId") in pinned}
            kept = [i for i in rest[: len(covered)] if i.get("itemId") in covered]
    if kept:
        parts.append(_items_part("pinned", f"Pinned ({len(kept)})", kept))
    recent = rest[len(kept) :]
    parts.append(_items_part("history", f"Recent history ({len(recent)} items)", recent))
    if tools:
        parts.append(_tools_part(tools, last_known))
    whole = len(sent) == len(context) == len(history)  # nothing left out: no need to look
    return {
        "parts": parts,
        "total": sum(p["tokens"] for p in parts),
        "omitted": [] if whole else _omitted(history, context, sent, summary, provider),
    }


def _instruction_part(piece: InstructionPart) -> TracePart:
    return {
        "kind": piece.kind,
        "label": piece.label,
        "tokens": estimate_text(piece.text),
        "text": piece.text,
    }


def _items_part(kind: PartKind, label: str, items: Sequence[Item]) -> TracePart:
    return {
        "kind": kind,
        "label": label,
        "tokens": sum(map(estimate_finished, items)),
        "itemIds": [str(i["itemId"]) for i in items],
    }


def _tools_part(tools: Sequence[ToolSchema], last_known: Collection[str]) -> TracePart:
    part: TracePart = {
        "kind": "tools",
        "label": "Tools: " + ", ".join(t.name for t in tools),
        "tokens": sum(estimate_tool(t) for t in tools),
    }
    provisional = [t.name for t in tools if t.name in last_known]
    if provisional:
        part["label"] += f" ({len(provisional)} as last listed: their servers are starting)"
        part["lastKnown"] = provisional
    return part


def _omitted(
    history: Sequence[Item],
    context: Sequence[Item],
    sent: Sequence[Item],
    summary: Item | None,
    provider: str,
) -> list[Omitted]:
    in_context = {i.get("itemId") for i in context}
    sent_ids = in_context if len(sent) == len(context) else {i.get("itemId") for i in sent}
    summarized: list[str] = []
    summaries: list[str] = []
    reasoning: list[str] = []
    for item in history:
        item_id = item.get("itemId")
        if item_id in sent_ids:
            continue
        if item.get("type") == SUMMARY:
            if summary is None or item_id != summary.get("itemId"):
                summaries.append(str(item_id))
        elif item_id not in in_context:
            summarized.append(str(item_id))
        elif item.get("type") == REASONING:
            reasoning.append(str(item_id))
    omitted: list[Omitted] = []
    if summarized:
        omitted.append({"itemIds": summarized, "reason": "replaced by the summary"})
    if summaries:
        omitted.append(
            {"itemIds": summaries, "reason": "an earlier summary, folded into the latest"}
        )
    if reasoning:
        why = (
            "this provider is never sent reasoning back"
            if provider == "openai"
            else "reasoning of earlier turns is not sent (current_turn reasoning context)"
        )
        omitted.append({"itemIds": reasoning, "reason": why})
    return omitted
