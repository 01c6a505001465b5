"""Cutting streamed Markdown into blocks that render the same apart as together.

A reply streams in for seconds or minutes; rendering all of it again at every frame costs time
in proportion to its length (~0.1 ms a line with Rich here), so a reply of a thousand lines would
stall the TUI for a tenth of a second per frame. Cut at the right places, the text can be rendered
block by block: a finished block is rendered once, and only the last one again at each frame.

A cut is made before a line that starts a new top-level block after a blank line: a line that
begins with a character other than a space, a list marker or a quote marker, outside a fenced
code block. Such a cut does not change how either side parses (CommonMark ends every open block
there), except for reference-style links, whose definition may come later: text with a link
definition is not cut at all (`has_link_definitions`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

_FENCE: Final = re.compile(r" {0,3}(`{3,}|~{3,})")
# Lines that may continue the block above them across a blank line: indented content, list
# items (a loose list), block quotes.
_CONTINUES: Final = re.compile(r"[ \t]|[-*+][ \t]|\d{1,9}[.)][ \t]|>|[-*+]$|\d{1,9}[.)]$")
_LINK_DEFINITION: Final = re.compile(r"^ {0,3}\[[^\]\n]+\]:", re.MULTILINE)


def has_link_definitions(text: str) -> bool:
    return _LINK_DEFINITION.search(text) is not None


@dataclass
class BlockCutter:
    """Finds cuts in a text that only grows. `feed` scans the complete lines not yet scanned
    and returns the offsets of the new cuts (each the start of a block)."""

    _scanned: int = 0  # offset of the first line not scanned yet
    _fence: str | None = None  # the opening marker of the fenced code block we are in
    _after_blank: bool = False  # the last line scanned outside a fence was blank
    _seen_text: bool = False  # something other than blank lines came before
    cuts: list[int] = field(default_factory=list)

    def feed(self, text: str) -> list[int]:
        new: list[int] = []
        position = self._scanned
        while (end := text.find("\n", position)) != -1:
            line = text[position:end]
            if self._starts_block(line):
                new.append(position)
            self._scan(line)
            position = end + 1
        self._scanned = position
        self.cuts += new
        return new

    def _starts_block(self, line: str) -> bool:
        return (
            self._fence is None
            and self._after_blank
            and self._seen_text
            and line.strip() != ""
            and _CONTINUES.match(line) is None
        )

    def _scan(self, line: str) -> None:
        if self._fence is not None:
            # A closing fence: up to 3 spaces, at least as many of the same character, nothing
            # after them but spaces (CommonMark).
            stripped = line.strip()
            indent = len(line) - len(line.lstrip(" "))
            if (
                indent <= 3
                and stripped.startswith(self._fence)
                and not stripped.rstrip(self._fence[0])
            ):
                self._fence = None
            return
        blank = line.strip() == ""
        self._after_blank = blank
        if not blank:
            self._seen_text = True
            if fence := _FENCE.match(line):
                self._fence = fence.group(1)


def blocks(text: str) -> list[str]:
    """`text` cut into blocks (all of it; the last block may be unfinished)."""
    cutter = BlockCutter()
    cutter.feed(text)
    starts = [0, *cutter.cuts]
    return [text[a:b] for a, b in zip(starts, [*cutter.cuts, len(text)], strict=True)]
