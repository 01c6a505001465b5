"""Cutting streamed Markdown into blocks that render the same apart as together.

A reply streams in for seconds or minutes; rendering all of it again at every frame costs time
in proportion to its length (~0.1 ms a line with Rich here), so a reply of a thousand lines would
stall the TUI for a tenth of a second per frame. Cut at the right places, the text can be rendered
block by block: a finished block is rendered once, and only the last one again at each frame.

`BlockCutter` proposes a cut before a line that may start a new top-level block after a blank
line: a line that begins with a character other than a space, a list marker or a quote marker,
outside a fenced code block. It is a quick scan of the new lines only; the renderer keeps a
proposed cut only where the Markdown parser starts a top-level block on that line
(`widgets/markdown_render.py`), which also rules out what the scan does not know (an HTML
block or comment that runs across blank lines, a fence inside a list item). Cut there, neither
side parses differently, except for reference-style links, whose definition may come later:
text with a link definition is not cut at all (`has_link_definitions`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Final

from markdown_it import MarkdownIt

# A fence opens with 3+ backticks or tildes; a backtick fence's info string has no backtick
# (```npm install``` on its own line is a paragraph).
_FENCE: Final = re.compile(r" {0,3}(`{3,}(?=[^`]*$)|~{3,})")
# Lines that may continue the block above them across a blank line: indented content, list
# items (a loose list), block quotes.
_CONTINUES: Final = re.compile(r"[ \t]|[-*+][ \t]|\d{1,9}[.)][ \t]|>|[-*+]$|\d{1,9}[.)]$")
# A link reference definition, also inside list items and quotes.
_LINK_DEFINITION: Final = re.compile(
    r"^[ \t]*(?:(?:[>*+-]|\d{1,9}[.)])[ \t]*)*\[[^\]\n]+\]:", re.MULTILINE
)
_BLANK: Final = " \t"  # CommonMark's blank line: spaces and tabs only (not NBSP)


_PARSER: Final = MarkdownIt().enable("strikethrough").enable("table")  # as Rich's Markdown


def has_link_definitions(text: str) -> bool:
    return _LINK_DEFINITION.search(text) is not None


def confirmed(text: str, cuts: list[int]) -> list[int]:
    """The proposed `cuts` (offsets in `text`, which starts at a block) where the Markdown
    parser starts a top-level block."""
    starts = {t.map[0] for t in _PARSER.parse(text) if t.level == 0 and t.map and t.nesting >= 0}
    return [cut for cut in cuts if text.count("\n", 0, cut) in starts]


@dataclass
class BlockCutter:
    """Finds cuts in a text that only grows. `feed` scans the complete lines not yet scanned
    and returns the offsets of the new cuts (each the start of a block)."""

    _scanned: int = 0  # offset of the first line not scanned yet
    _fence: str | None = None  # the opening marker of the fenced code block we are in
    _after_blank: bool = False  # the last line scanned outside a fence was blank
    _seen_text: bool = False  # something other than blank lines came before

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
        return new

    def _starts_block(self, line: str) -> bool:
        return (
            self._fence is None
            and self._after_blank
            and self._seen_text
            and line.strip(_BLANK) != ""
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
        blank = line.strip(_BLANK) == ""
        self._after_blank = blank
        if not blank:
            self._seen_text = True
            if fence := _FENCE.match(line):
                self._fence = fence.group(1)


def blocks(text: str) -> list[str]:
    """`text` cut into blocks (all of it; the last block may be unfinished): at the cutter's
    proposals that the parser confirms."""
    bounds = [0, *confirmed(text, BlockCutter().feed(text)), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]
