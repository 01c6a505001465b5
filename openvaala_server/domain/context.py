"""What the model sees, and where compaction cuts. Pure: no I/O, no event loop.

The context of a session is its latest `summary` item followed by every item after the point that
summary covers (`coversUpTo`); with no summary, the whole history. The full history always stays
on disk and in clients: only what is sent to the model shrinks.

Compaction keeps "the recent part": at least `keep_ratio` of the window (when the history allows),
cut only at step boundaries — never between a tool call and its result, never starting the kept
part with a tool result whose call would be summarized away.
"""

from __future__ import annotations

from collections.abc import Sequence

from openvaala_server.domain.records import REASONING, SUMMARY, TOOL_CALL, TOOL_RESULT, Item
from openvaala_server.domain.usage import estimate_item, threshold

KEEP_RATIO = 0.2


def latest_summary_index(items: Sequence[Item]) -> int | None:
    for index in range(len(items) - 1, -1, -1):
        if items[index].get("type") == SUMMARY and items[index].get("status") == "completed":
            return index
    return None


def context_items(items: Sequence[Item]) -> list[Item]:
    """The latest summary, then the items after the point it covers (summaries left out)."""
    at = latest_summary_index(items)
    if at is None:
        return [i for i in items if i.get("type") != SUMMARY]
    summary = items[at]
    covers = summary.get("coversUpTo")
    start = 0
    for index, item in enumerate(items):
        if item.get("itemId") == covers:
            start = index + 1
            break
    return [summary, *(i for i in items[start:] if i.get("type") != SUMMARY)]


def drop_earlier_reasoning(items: Sequence[Item]) -> list[Item]:
    """For `current_turn` reasoning: earlier turns' reasoning is not in the context."""
    last_turn = next((i.get("turnId") for i in reversed(items) if i.get("turnId")), None)
    return [i for i in items if i.get("type") != REASONING or i.get("turnId") == last_turn]


def estimate_items(items: Sequence[Item]) -> int:
    return sum(estimate_item(i) for i in items)


def should_compact(used: int, context_window: int, max_output_tokens: int) -> bool:
    """Before a model call: would this request reach the threshold?"""
    return used >= threshold(context_window, max_output_tokens)


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
