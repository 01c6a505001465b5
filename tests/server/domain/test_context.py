"""Threshold arithmetic, usage, and where compaction cuts: pure, no I/O."""

from __future__ import annotations

from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from openvaala_server.domain.context import (
    context_items,
    drop_earlier_reasoning,
    should_compact,
    split_point,
    valid_boundaries,
)
from openvaala_server.domain.records import Item
from openvaala_server.domain.usage import UsageTracker, estimate_item, threshold


def test_threshold_is_the_lower_of_80_percent_and_window_minus_output() -> None:
    assert threshold(100_000, 8_000) == 80_000
    assert threshold(100_000, 30_000) == 70_000
    assert threshold(10_000, 2_000) == 8_000
    assert should_compact(80_000, 100_000, 8_000)
    assert not should_compact(79_999, 100_000, 8_000)


def test_usage_is_the_last_report_plus_an_estimate_since() -> None:
    usage = UsageTracker(context_window=1000, max_output_tokens=100)
    usage.add({"type": "user_message", "text": "x" * 40})
    assert usage.to_wire()["source"] == "estimated" and usage.used == 14
    usage.report(300, 20, "2026-01-01T00:00:00Z")
    assert usage.used == 320 and usage.to_wire()["source"] == "reported"
    usage.add({"type": "tool_result", "output": "y" * 400})
    assert usage.used == 320 + 104
    assert usage.to_wire()["threshold"] == 800


_counter = iter(range(10**9))


def _item(kind: str, size: int = 40, **extra: Any) -> Item:
    item: Item = {"itemId": f"{next(_counter):032x}", "type": kind, "status": "completed"}
    item.update(cast(Item, extra))
    item["output" if kind == "tool_result" else "text"] = "x" * size
    return item


@st.composite
def histories(draw: st.DrawFn) -> list[Item]:
    """Histories made of steps: a user message, then model output with tool calls and results."""
    items: list[Item] = []
    for _ in range(draw(st.integers(1, 12))):
        items.append(_item("user_message", draw(st.integers(1, 2000))))
        for _ in range(draw(st.integers(0, 3))):
            calls = [
                _item("tool_call", 10, callId=f"c{next(_counter)}")
                for _ in range(draw(st.integers(1, 3)))
            ]
            items.extend(calls)
            for call in calls:
                items.append(
                    _item("tool_result", draw(st.integers(0, 3000)), callId=call["callId"])
                )
        items.append(_item("agent_message", draw(st.integers(1, 1500))))
    return items


@settings(max_examples=200, deadline=None)
@given(histories(), st.sampled_from([2_000, 8_000, 32_000]))
def test_split_keeps_whole_steps_and_at_least_20_percent(items: list[Item], window: int) -> None:
    cut = split_point(items, window)
    kept = items[cut:]
    summarized_calls = {i["callId"] for i in items[:cut] if i["type"] == "tool_call"}
    kept_results = {i["callId"] for i in kept if i["type"] == "tool_result"}
    assert summarized_calls.isdisjoint(kept_results), "a tool call separated from its result"
    kept_calls = {i["callId"] for i in kept if i["type"] == "tool_call"}
    assert kept_results <= kept_calls, "the kept part starts with an orphan tool result"
    if cut:
        assert kept[0]["type"] != "tool_result"
        assert sum(estimate_item(i) for i in kept) >= window * 0.2
    else:
        # Nothing summarized only when no valid cut keeps 20% of the window.
        for boundary in valid_boundaries(items):
            assert sum(estimate_item(i) for i in items[boundary:]) < window * 0.2


def test_context_is_the_latest_summary_and_what_follows_it() -> None:
    a, b, c = _item("user_message"), _item("agent_message"), _item("user_message")
    first = _item("summary", coversUpTo=a["itemId"])
    d = _item("agent_message")
    second = _item("summary", coversUpTo=c["itemId"])
    history = [a, b, c, first, d, second]
    assert context_items([a, b]) == [a, b]
    assert context_items([a, b, c, first]) == [first, b, c]
    assert context_items(history) == [second, d]


def test_current_turn_reasoning_drops_earlier_turns() -> None:
    old = _item("reasoning", turnId="t1")
    new = _item("reasoning", turnId="t2")
    msg = _item("user_message", turnId="t2")
    assert drop_earlier_reasoning([old, msg, new]) == [msg, new]
