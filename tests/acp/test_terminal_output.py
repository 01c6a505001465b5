"""openvaala_acp/terminal_output.py: the new part of a terminal's output at each look, also when
the editor has cut its start."""

from __future__ import annotations

from openvaala_acp.terminal_output import ANCHOR, OutputTail


def test_each_look_gives_what_was_printed_since() -> None:
    tail = OutputTail()
    assert tail.new("") == ""
    assert tail.new("one\n") == "one\n"
    assert tail.new("one\n") == ""
    assert tail.new("one\ntwo\n") == "two\n"


def test_a_cut_start_still_gives_only_the_new_end() -> None:
    tail = OutputTail()
    assert tail.new("a" * 10 + "line 1\n") == "a" * 10 + "line 1\n"
    # The editor dropped the start (its byte limit), and more came.
    assert tail.new("aaaline 1\nline 2\n") == "line 2\n"


def test_nothing_is_guessed_when_what_was_seen_is_cut_too() -> None:
    tail = OutputTail()
    tail.new("x" * ANCHOR + "old\n")
    assert tail.new("y" * 100) == ""  # no duplicate, no guess
    assert tail.new("y" * 100 + "next\n") == "next\n"  # and it goes on from there
