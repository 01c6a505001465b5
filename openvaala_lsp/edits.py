"""Line edits from one rendering of a transcript to the next, so an editor that asks
`openvaala/render` with `since` gets only what changed (a streamed reply touches a few lines at
the end and the context line; a 2,000-line transcript should cost what a short one does)."""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import TypedDict


class LineEdit(TypedDict):
    start: int
    end: int
    lines: list[str]


def line_edits(old: list[str], new: list[str]) -> list[LineEdit]:
    """Edits `{start, end, lines}` (0-based, end exclusive, on the old lines) that turn `old` into
    `new`, last first: applied in order, each one's line numbers are still right."""
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    edits: list[LineEdit] = [
        {"start": i1, "end": i2, "lines": new[j1:j2]}
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]
    return edits[::-1]
