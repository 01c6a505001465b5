"""Automatic titles: the first non-empty line of the first message, up to 40 characters."""

from __future__ import annotations

TITLE_LIMIT = 40


def auto_title(text: str) -> str:
    for line in text.splitlines():
        line = " ".join(line.split())
        if line:
            if len(line) <= TITLE_LIMIT:
                return line
            return line[: TITLE_LIMIT - 1].rstrip() + "…"
    return "New conversation"
