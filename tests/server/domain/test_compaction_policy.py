"""The one compaction decision (domain/compaction_policy.py), without an event loop: each of the
four moments that ask, at the numbers where the answer changes."""

from __future__ import annotations

import pytest

from openvaala_server.domain.compaction_policy import (
    OVERFLOW_KEEP_RATIO,
    ContextState,
    Decision,
    decide,
)
from openvaala_server.domain.context import KEEP_RATIO
from openvaala_server.domain.usage import threshold


def state(used: int, **kw: object) -> ContextState:
    fields: dict[str, object] = {
        "used": used,
        "context_window": 100_000,
        "max_output_tokens": 10_000,
        "compact_fraction": None,
    }
    fields.update(kw)
    return ContextState(**fields)  # type: ignore[arg-type]


LIMIT = threshold(100_000, 10_000, None)


def test_before_a_call_compacts_from_the_threshold_on_and_may_use_a_prepared_summary() -> None:
    assert decide("before_call", state(LIMIT - 1)).action == "none"
    assert decide("before_call", state(LIMIT)) == Decision(
        "compact", "auto", KEEP_RATIO, use_prepared=True
    )


def test_a_threshold_of_zero_turns_automatic_compaction_off() -> None:
    assert decide("before_call", state(99_000, compact_fraction=0.0)).action == "none"


def test_a_due_refresh_summarizes_everything_but_only_at_a_turns_first_call() -> None:
    due = state(10, replies_until_refresh=0)
    assert decide("before_call", due, first_call=True) == Decision(
        "compact", "refresh", 0.0, use_prepared=True
    )
    assert decide("before_call", due, first_call=False).action == "none"
    assert decide("before_call", state(10, replies_until_refresh=2), first_call=True).action == (
        "none"
    )


def test_over_the_threshold_wins_over_a_refresh() -> None:
    assert decide("before_call", state(LIMIT, replies_until_refresh=0), first_call=True).reason == (
        "auto"
    )


def test_idle_prepares_from_the_early_threshold_and_stops_below_it() -> None:
    assert decide("idle", state(30_000, early_threshold=30_000)) == Decision("prepare", "auto")
    # Right after a compaction usage fell under the threshold it aims for: nothing more to do
    # (issue 34 point 7: each idle moment used to cost a summary call).
    assert decide("idle", state(29_999, early_threshold=30_000)).action == "none"


def test_idle_prepares_nothing_when_early_compaction_is_off_or_something_runs() -> None:
    assert decide("idle", state(90_000)).action == "none"
    assert decide("idle", state(90_000, early_threshold=0)).action == "none"
    assert decide("idle", state(90_000, early_threshold=30_000), busy=True).action == "none"


def test_idle_prepares_a_refresh_when_one_is_due() -> None:
    assert decide("idle", state(10, early_threshold=30_000, replies_until_refresh=0)) == Decision(
        "prepare", "refresh", 0.0
    )


def test_an_overflow_compacts_harder_once_then_gives_up() -> None:
    assert decide("overflow", state(10)) == Decision("compact", "auto", OVERFLOW_KEEP_RATIO)
    assert decide("overflow", state(10), overflow_retried=True).action == "none"


@pytest.mark.parametrize("used", [0, LIMIT - 1, LIMIT * 2])
def test_by_hand_everything_but_the_latest_step_is_summarized(used: int) -> None:
    assert decide("manual", state(used)) == Decision("compact", "manual", 0.0)
