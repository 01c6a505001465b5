"""`PositionIndex`: the id → position map behind paging (domain/positions.py) answers exactly what
a scan from the start would, whatever happened to the list between two lookups."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from openvaala_server.domain.positions import PositionIndex


def items(*ids: str) -> list[dict[str, Any]]:
    return [{"itemId": i} for i in ids]


def scan(history: list[dict[str, Any]], item_id: str) -> int | None:
    return next((n for n, it in enumerate(history) if it["itemId"] == item_id), None)


def test_follows_appends_and_a_replaced_list() -> None:
    index = PositionIndex()
    history = items("a", "b", "c")
    assert index.find(history, "c") == 2
    history += items("d", "e")
    assert index.find(history, "e") == 4
    assert index.find(history, "a") == 0
    assert index.find(history, "zz") is None
    other = items("e", "a")  # another list (a session's history read again): indexed afresh
    assert index.find(other, "a") == 1


def test_a_list_changed_other_than_by_appending_is_indexed_again() -> None:
    index = PositionIndex()
    history = items("a", "b", "c")
    assert index.find(history, "c") == 2
    history.insert(0, {"itemId": "x"})
    assert index.find(history, "c") == 3
    del history[:2]
    assert index.find(history, "b") == 0


OPS = st.lists(
    st.tuples(st.sampled_from(["append", "insert", "pop", "find"]), st.integers(0, 50)),
    max_size=40,
)


@given(OPS)
def test_answers_what_a_scan_answers(ops: list[tuple[str, int]]) -> None:
    """Ids are unique in a history (each item gets a new one), as here."""
    index = PositionIndex()
    history: list[dict[str, Any]] = []
    made = 0
    for op, value in ops:
        if op == "append":
            history.append({"itemId": f"i{made}"})
            made += 1
        elif op == "insert":
            history.insert(len(history) // 2, {"itemId": f"i{made}"})
            made += 1
        elif op == "pop" and history:
            history.pop(0)
        elif op == "find":  # ids that are there, were there, or never were
            assert index.find(history, f"i{value}") == scan(history, f"i{value}")
