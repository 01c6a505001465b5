"""The context-steering keys of an `[agents.NAME]` table (docs/configuration.md):
`compact_threshold`, `early_compaction` and `refresh_every`."""

from __future__ import annotations

from typing import Any, Protocol

CONTEXT_KEYS = ("compact_threshold", "early_compaction", "refresh_every")


class _Table(Protocol):
    table: dict[str, Any]

    def number(self, key: str, default: Any = None) -> Any: ...

    def integer(self, key: str, default: Any = None, minimum: int = 0) -> Any: ...

    def fail(self, key: str, problem: str) -> Exception: ...


def parse_context_keys(t: _Table) -> dict[str, Any]:
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
