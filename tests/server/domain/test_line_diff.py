"""A file's diff is computed in bounded time (the approval prompt waits for it)."""

from __future__ import annotations

import difflib

from openvaala_server.domain.patch import unified_diff


def _sides(diff: str) -> tuple[str, str]:
    """The old and new texts a unified diff (with all its context) says."""
    old, new = [], []
    for line in diff.splitlines(keepends=True)[3:]:
        if line.startswith("@@"):
            continue
        if line[0] in " -":
            old.append(line[1:])
        if line[0] in " +":
            new.append(line[1:])
    return "".join(old), "".join(new)


def test_a_file_rewritten_every_other_line_diffs_at_once_and_truly() -> None:
    # difflib alone takes minutes here (quadratic in the lines); the prompt would never show.
    old = "".join(f"line {i}\n" for i in range(20_000))
    new = "".join(f"line {i}\n" if i % 2 else f"other {i}\n" for i in range(20_000))
    diff = unified_diff(old, new, "f.txt", "f.txt")
    # One hunk from the first to the last changed line (no common head or tail here).
    assert diff.count("\n@@ ") == 1
    assert _sides(diff) == (old, new)


def test_small_changes_keep_difflibs_smallest_diff() -> None:
    old = "".join(f"line {i}\n" for i in range(2_000))
    new = old.replace("line 10\n", "ten\n").replace("line 1500\n", "")
    diff = unified_diff(old, new, "f.txt", "f.txt")
    expected = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), "a/f.txt", "b/f.txt"
        )
    )
    assert diff == "diff --git a/f.txt b/f.txt\n" + expected
