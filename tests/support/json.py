"""Free JSON in tests: a payload typed `JsonValue` read by keys the test knows are there."""

from __future__ import annotations

from typing import Any


def j(value: object) -> Any:
    """`value` as free JSON: tests index into payloads whose shape they assert anyway."""
    return value
