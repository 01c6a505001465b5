"""The composer's history (Up and Down), without an app."""

from __future__ import annotations

from openvaala_tui.composer_history import LIMIT, ComposerHistory


def test_up_walks_back_and_down_returns_to_what_was_typed() -> None:
    past = ComposerHistory()
    past.record("one")
    past.record("two")
    assert past.newer() is None  # not walking: Down moves the cursor
    assert past.older("half typed") == "two"
    assert past.older("two") == "one"
    assert past.older("one") is None  # the oldest
    assert past.newer() == "two"
    assert past.newer() == "half typed"
    assert not past.browsing


def test_blank_and_repeated_entries_are_kept_once_and_the_oldest_go() -> None:
    past = ComposerHistory()
    for text in ["a", "a", "  ", "b"]:
        past.record(text)
    assert past.entries == ["a", "b"]
    for n in range(LIMIT + 5):
        past.record(str(n))
    assert len(past.entries) == LIMIT
    assert past.entries[-1] == str(LIMIT + 4)


def test_nothing_recorded_recalls_nothing() -> None:
    assert ComposerHistory().older("draft") is None
