"""Memory across conversations (docs/configuration.md, "What the model is told"): notes the user
asked to keep, one Markdown list entry each, appended to a plain file the user owns. Pure: the
file is written by runtime/memory.py."""

from __future__ import annotations

from typing import Final, Literal

Scope = Literal["user", "project"]
SCOPES: Final[tuple[Scope, ...]] = ("project", "user")
ENTRY_MAX_CHARS: Final = 2_000
FILE_MAX_CHARS: Final = 100_000  # what `memory/write` accepts


def entry(text: str) -> str:
    """`text` as one list entry: its first line after "- ", the next ones indented under it."""
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    return "- " + "\n  ".join(lines) + "\n"


def appended(current: str, text: str) -> str:
    """The file's text with the entry added at the end, on a line of its own."""
    if current and not current.endswith("\n"):
        current += "\n"
    return current + entry(text)
