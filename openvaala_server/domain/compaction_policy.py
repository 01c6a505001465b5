"""When to compact, in one place (docs/design.md "One compaction decision").

Four moments ask: before a model call (the turn), at an idle moment (early compaction), after the
provider said the context overflowed, and when the user asks (`/compact`, "Compact context",
Codex's compact). Each asks `decide` with the numbers it has and does what the decision says;
the runtime keeps only the doing (runtime/early.py, runtime/turn.py, runtime/manager.py). Pure:
tested without an event loop (tests/server/domain/test_compaction_policy.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from openvaala_server.domain.context import KEEP_RATIO, should_compact
from openvaala_server.domain.records import Item

Moment = Literal["before_call", "idle", "overflow", "manual"]
Action = Literal["none", "prepare", "compact"]
# What a summary says it was made for (its `reason`, docs/protocol.md "Compaction").
Reason = Literal["auto", "refresh", "manual"]

# After a context overflow the estimate was wrong: keep less than usual (one retry only).
OVERFLOW_KEEP_RATIO: Final = 0.1


@dataclass(frozen=True)
class ContextState:
    """What the decision needs of a session's context, in tokens."""

    used: int
    context_window: int
    max_output_tokens: int
    compact_fraction: float | None  # the agent's `compact_threshold` (None: the default)
    # From this usage on a summary is prepared while idle (context_view.early_threshold);
    # None or 0: early compaction is off.
    early_threshold: int | None = None
    # Replies before `refresh_every` asks for a fresh summary; None: refresh is off.
    replies_until_refresh: int | None = None

    @property
    def over(self) -> bool:
        return should_compact(
            self.used, self.context_window, self.max_output_tokens, self.compact_fraction
        )

    @property
    def refresh_due(self) -> bool:
        return self.replies_until_refresh == 0


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: Reason = "auto"
    # The share of the context window kept verbatim after the summary.
    keep_ratio: float = KEEP_RATIO
    # A summary prepared early may stand in for this compaction (when it still fits).
    use_prepared: bool = False


NONE: Final = Decision("none")


def decide(
    moment: Moment,
    state: ContextState,
    *,
    first_call: bool = False,
    busy: bool = False,
    overflow_retried: bool = False,
) -> Decision:
    """What to do at `moment`.

    - before a model call: compact when the request would reach the threshold; at a turn's first
      call, refresh (everything summarized) when `refresh_every` replies have passed;
    - idle: prepare a summary in the background from `early_compaction` on, or when a refresh is
      due — unless something runs (`busy`); usage under the early threshold after a compaction
      asks for nothing, so early compaction stops once it has done its work;
    - overflow: compact harder, once (`overflow_retried`: the turn then fails);
    - manual: compact everything but the latest step.
    """
    if moment == "manual":
        return Decision("compact", "manual", keep_ratio=0.0)
    if moment == "overflow":
        if overflow_retried:
            return NONE
        return Decision("compact", "auto", keep_ratio=OVERFLOW_KEEP_RATIO)
    if moment == "before_call":
        if state.over:
            return Decision("compact", "auto", use_prepared=True)
        if first_call and state.refresh_due:
            return Decision("compact", "refresh", keep_ratio=0.0, use_prepared=True)
        return NONE
    # idle
    early = state.early_threshold
    if busy or early is None or early <= 0:
        return NONE
    if state.refresh_due:
        return Decision("prepare", "refresh", keep_ratio=0.0)
    if state.used >= early:
        return Decision("prepare", "auto")
    return NONE


@dataclass
class CompactionPlan:
    """What a compaction summarizes: the summary it folds in (if any) and the items it covers.
    Pinned items are never covered: they stay verbatim after the summary."""

    earlier: list[Item]
    covered: list[Item]
    pinned: tuple[str, ...]


@dataclass
class Prepared:
    """A summary written in the background (early compaction), not yet in the history."""

    plan: CompactionPlan
    text: str
    model: str
    summary_id: str | None  # the persisted summary it folds in (the latest when prepared)

    @property
    def covers_up_to(self) -> str:
        return str(self.plan.covered[-1]["itemId"])
