"""The context-steering keys of an `[agents.NAME]` table (docs/configuration.md):
`compact_threshold`, `early_compaction` and `refresh_every`."""

from __future__ import annotations

from typing import Protocol, TypedDict

CONTEXT_KEYS = ("compact_threshold", "early_compaction", "refresh_every")


class ContextKeys(TypedDict):
    """The fields of `AgentConfig` these keys set (None: not set)."""

    compact_threshold: float | None
    early_compaction: float | None
    refresh_every: int | None


class _Table(Protocol):
    def number(self, key: str) -> float | None: ...

    def integer(self, key: str, *, minimum: int = 0) -> int | None: ...

    def fail(self, key: str, problem: str) -> Exception: ...


def parse_context_keys(t: _Table) -> ContextKeys:
    threshold = t.number("compact_threshold")
    if threshold is not None and threshold > 1:
        raise t.fail("compact_threshold", "is a fraction of the usable window: 0 to 1")
    early = t.number("early_compaction")
    if early is not None:
        if not 0 < early < 1:
            raise t.fail("early_compaction", "is a fraction of the usable window: above 0, below 1")
        if threshold == 0:
            raise t.fail("early_compaction", "needs automatic compaction (compact_threshold is 0)")
        # The default threshold is 80% of the window at most.
        if early >= (threshold if threshold is not None else 0.8):
            raise t.fail("early_compaction", "must be lower than compact_threshold")
    refresh = t.integer("refresh_every", minimum=1)
    return {"compact_threshold": threshold, "early_compaction": early, "refresh_every": refresh}
