"""A search snippet as the protocol sends it: plain text and the ranges of the matched words.

The index marks matches with two private-use characters (SQLite FTS5 `snippet()`,
store/index.py); the wire carries the text without them and the ranges apart, so a client never
parses markup out of text someone wrote (docs/protocol.md, "conversation/list"). Ranges count
UTF-16 code units, the unit a browser's strings are indexed in.
"""

from __future__ import annotations

import re
from typing import Final, TypedDict

OPEN: Final = "\ue000"
CLOSE: Final = "\ue001"
MAX_CHARS: Final = 240  # a long token (a URL, a hash) must not make a snippet a page long
ELLIPSIS: Final = "…"
_MARKERS: Final = re.compile(f"([{OPEN}{CLOSE}])")


class SearchSnippet(TypedDict):
    """The best matching message text of a searched conversation, cut short (domain/snippets.py):
    `matches` are [start, end) ranges of the matched words in UTF-16 code units."""

    text: str
    matches: list[list[int]]


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def from_marked(marked: str, max_chars: int = MAX_CHARS) -> SearchSnippet:
    """The snippet of FTS5 text with OPEN/CLOSE around each match, cut to `max_chars`. A
    marker the text itself contained is dropped like the others: a range may be wrong, the text
    is still only text."""
    text: list[str] = []
    matches: list[list[int]] = []
    at = 0  # UTF-16 units written so far
    kept = 0  # characters written so far
    start: int | None = None
    for part in _split(marked):
        if part == OPEN:
            start = at
        elif part == CLOSE:
            if start is not None and at > start:
                matches.append([start, at])
            start = None
        else:
            room = max_chars - kept
            piece = part if len(part) <= room else part[:room] + ELLIPSIS
            text.append(piece)
            at += _units(piece)
            kept += len(piece)
            if len(part) > room:
                break
    if start is not None and at > start:
        matches.append([start, at])
    return {"text": "".join(text), "matches": matches}


def _split(marked: str) -> list[str]:
    return [part for part in _MARKERS.split(marked) if part]
