"""domain/diffs.py: one file's change as clients get it, and the bound on a whole result."""

from __future__ import annotations

from openvaala_server.domain.diffs import MAX_TEXT_CHARS, bounded, file_diff


def test_kinds_texts_and_the_diff() -> None:
    added = file_diff(None, "a\n", "new.txt")
    assert added["kind"] == "add" and added["newText"] == "a\n" and "oldText" not in added
    gone = file_diff("a\n", None, "old.txt")
    assert gone["kind"] == "delete" and gone["oldText"] == "a\n" and "newText" not in gone
    moved = file_diff("a\n", "b\n", "x.txt", "y.txt")
    assert moved["kind"] == "move" and moved["movePath"] == "y.txt"
    assert "-a\n+b\n" in moved["diff"] and "rename from x.txt" in moved["diff"]


def test_a_large_file_keeps_its_diff_but_not_its_texts() -> None:
    big = "x\n" * MAX_TEXT_CHARS
    change = file_diff(big, big + "y\n", "big.txt")
    assert "oldText" not in change and "newText" not in change and "+y" in change["diff"]


def test_many_files_stay_within_the_budget_in_order() -> None:
    changes = [file_diff("a\n" * 100, "b\n" * 100, f"f{i}.txt") for i in range(10)]
    one = len(changes[0]["diff"]) + 400  # the diff and both texts of one file
    kept = bounded(changes, budget=one * 2 + len(changes[0]["diff"]))
    assert [c["path"] for c in kept] == [f"f{i}.txt" for i in range(10)]
    assert all("oldText" in c for c in kept[:2]) and "oldText" not in kept[2]
    assert kept[2]["diff"] == changes[2]["diff"]  # its diff still fits
    assert kept[3]["diff"] == "[the diff of f3.txt is left out: the result is too large]\n"
    assert sum(len(c["diff"]) + len(c.get("oldText", "")) * 2 for c in kept) < one * 4
