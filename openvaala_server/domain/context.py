"""What the model sees, and where compaction cuts. Pure: no I/O, no event loop.

The context of a session is its latest `summary` item followed by every item after the point that
summary covers (`coversUpTo`); with no summary, the whole history. The full history always stays
on disk and in clients: only what is sent to the model shrinks.

What a request costs before the provider reports it (`estimate_request`): the system prompt, the
tool schemas and the items the provider is sent back — Chat Completions never gets reasoning, and
with the `current_turn` reasoning mode earlier turns' reasoning is not in context. The mode is the
one the provider applied: reported by the last call, else stamped on the latest reasoning item
(`providerData.reasoningContext`, so it survives a restart), else the configured one.

Compaction keeps "the recent part": at least `keep_ratio` of the window (when the history allows),
cut only at step boundaries — never between a tool call and its result, never starting the kept
part with a tool result whose call would be summarized away.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final

from openvaala_server.domain.records import (
    AGENT_MESSAGE,
    REASONING,
    SUMMARY,
    TOOL_CALL,
    TOOL_RESULT,
    Item,
)
from openvaala_server.domain.usage import (
    ToolSchema,
    estimate_item,
    estimate_text,
    estimate_tool,
    threshold,
)

KEEP_RATIO = 0.2

# Reasoning context modes (`reasoning_context` of openai_responses models, docs/configuration.md).
ALL_TURNS: Final = "all_turns"
CURRENT_TURN: Final = "current_turn"
REASONING_CONTEXTS: Final = (ALL_TURNS, CURRENT_TURN)
# The mode a provider applies when nobody asks for one.
DEFAULT_REASONING_CONTEXT: Final = {"openai_responses": CURRENT_TURN}


def latest_summary_index(items: Sequence[Item]) -> int | None:
    for index in range(len(items) - 1, -1, -1):
        if items[index].get("type") == SUMMARY and items[index].get("status") == "completed":
            return index
    return None


def covered_start(items: Sequence[Item], summary: Item) -> int:
    """The index of the first item after what `summary` covers. When its end is not here (a
    fork after compaction copies from the summary on), what comes before the summary: only the
    pinned items the fork copied (runtime/history.py)."""
    covers = summary.get("coversUpTo")
    own = summary.get("itemId")
    at = 0
    for index, item in enumerate(items):
        item_id = item.get("itemId")
        if item_id == covers:
            return index + 1
        if item_id == own:
            at = index
    return at


def context_items(items: Sequence[Item], pinned: Collection[str] = ()) -> list[Item]:
    """The latest summary, then the pinned items it covers (verbatim, in their order), then the
    items after the point it covers (summaries left out)."""
    at = latest_summary_index(items)
    if at is None:
        return [i for i in items if i.get("type") != SUMMARY]
    summary = items[at]
    start = covered_start(items, summary)
    kept = [i for i in items[:start] if i.get("itemId") in pinned] if pinned else []
    return [summary, *kept, *(i for i in items[start:] if i.get("type") != SUMMARY)]


def drop_earlier_reasoning(items: Sequence[Item]) -> list[Item]:
    """For `current_turn` reasoning: earlier turns' reasoning is not in the context."""
    last_turn = next((i.get("turnId") for i in reversed(items) if i.get("turnId")), None)
    return [i for i in items if i.get("type") != REASONING or i.get("turnId") == last_turn]


def estimate_items(items: Sequence[Item]) -> int:
    return sum(estimate_item(i) for i in items)


def stamped_reasoning_context(items: Sequence[Item]) -> str | None:
    """The mode the provider applied to the latest reasoning it returned, as stamped on it."""
    for item in reversed(items):
        if item.get("type") != REASONING:
            continue
        data = item.get("providerData")
        mode = data.get("reasoningContext") if isinstance(data, dict) else None
        if mode in REASONING_CONTEXTS:
            return str(mode)
    return None


def reasoning_context(
    items: Sequence[Item], provider: str, reported: str | None, configured: str | None
) -> str | None:
    """The reasoning mode in effect: the one the provider last `reported`, else the one stamped
    in the history, else the `configured` one, else the provider's default (`None`: every
    reasoning item counts)."""
    return (
        reported
        or stamped_reasoning_context(items)
        or configured
        or DEFAULT_REASONING_CONTEXT.get(provider)
    )


def carried(item: Item, provider: str) -> bool:
    """Whether the next request of `provider` carries `item` at all: Chat Completions never sends
    reasoning back, so a reasoning model's thinking must not fill its context meter."""
    return not (provider == "openai" and item.get("type") == REASONING)


def sent_items(items: Sequence[Item], provider: str, mode: str | None) -> list[Item]:
    """The context items whose text a request carries."""
    if provider == "openai":
        return [i for i in items if i.get("type") != REASONING]  # never sent back
    if mode == CURRENT_TURN:
        return drop_earlier_reasoning(items)
    return list(items)


def estimate_request(
    instructions: str,
    tools: Sequence[ToolSchema],
    items: Sequence[Item],
    *,
    provider: str,
    reported_context: str | None = None,
    configured_context: str | None = None,
) -> int:
    """An estimate of the whole next request: system prompt, tool schemas and context `items`
    (`context_items` of the history). `provider` is the model's provider name; the reasoning
    mode is resolved by `reasoning_context`."""
    mode = reasoning_context(items, provider, reported_context, configured_context)
    return (
        estimate_text(instructions)
        + sum(estimate_tool(tool) for tool in tools)
        + estimate_items(sent_items(items, provider, mode))
    )


def should_compact(
    used: int, context_window: int, max_output_tokens: int, fraction: float | None = None
) -> bool:
    """Before a model call: would this request reach the threshold? Never with a
    `compact_threshold` of 0 (automatic compaction off)."""
    limit = threshold(context_window, max_output_tokens, fraction)
    return limit > 0 and used >= limit


def valid_boundaries(items: Sequence[Item]) -> list[int]:
    """Indexes i where the history may be cut: items[:i] summarized, items[i:] kept.

    A cut is valid when every tool call before it has its result before it too, and the kept
    part does not start with a tool result.
    """
    open_calls: set[str] = set()
    boundaries = []
    for index, item in enumerate(items):
        if index > 0 and not open_calls and item.get("type") != TOOL_RESULT:
            boundaries.append(index)
        kind = item.get("type")
        if kind == TOOL_CALL:
            open_calls.add(str(item.get("callId")))
        elif kind == TOOL_RESULT:
            open_calls.discard(str(item.get("callId")))
    return boundaries


def split_point(items: Sequence[Item], context_window: int, keep_ratio: float = KEEP_RATIO) -> int:
    """Where to cut `items` (a session's context without its summary) for compaction.

    Returns k: items[:k] go into the summary, items[k:] are kept. The kept part is the shortest
    suffix at a valid boundary holding at least `keep_ratio` of the window; when the whole history
    is smaller than that, it is all kept (k = 0: nothing to summarize).
    """
    keep_tokens = int(context_window * keep_ratio)
    suffix_tokens = [0] * (len(items) + 1)  # suffix_tokens[i] = tokens of items[i:]
    for index in range(len(items) - 1, -1, -1):
        suffix_tokens[index] = suffix_tokens[index + 1] + estimate_item(items[index])
    for boundary in reversed(valid_boundaries(items)):
        if suffix_tokens[boundary] >= keep_tokens:
            return boundary
    return 0


def replies_since_summary(items: Sequence[Item]) -> int:
    """How many turns have answered (an agent message) since the latest summary: what
    `refresh_every` counts."""
    at = latest_summary_index(items)
    turns = {
        i.get("turnId")
        for i in items[(at + 1 if at is not None else 0) :]
        if i.get("type") == AGENT_MESSAGE
    }
    return len(turns)


@dataclass(frozen=True)
class SinceSummary:
    """What the gauge reads of a context after its latest summary (early compaction's start,
    `refresh_every`): kept when a session lets go of all but its last page, where the summary
    may no longer be (runtime/residency.py)."""

    tokens: int | None  # the estimate of the items after it; None: no summary
    replies: int  # turns answered since (`replies_since_summary`)


def since_summary(items: Sequence[Item]) -> SinceSummary:
    at = latest_summary_index(items)
    tokens = estimate_items(items[at + 1 :]) if at is not None else None
    return SinceSummary(tokens, replies_since_summary(items))
