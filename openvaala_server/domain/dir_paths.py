"""A directory the user typed, as the daemon reads it (docs/protocol.md, "directories/list"):
`~` and `~/…` are the daemon user's home; anything else must be absolute. Pure: the home is
given, nothing is read from the disk."""

from __future__ import annotations

import posixpath

PATH_MAX = 4096


class BadPath(ValueError):
    """The text names no absolute directory path; the message says why."""


def expand(raw: str, home: str) -> str:
    """The absolute, normalized path `raw` names (`~` expanded to `home`; blank: `home`)."""
    text = raw.strip()
    if not text:
        return home
    return absolute(text, home)


def absolute(text: str, home: str) -> str:
    """The absolute, normalized path `text` names, taken as it is (a name may end in a space):
    a leading `~` or `~/` is `home`; any other relative path is a `BadPath`."""
    if "\x00" in text:
        raise BadPath("a path cannot contain a NUL character")
    if text == "~":
        text = home
    elif text.startswith("~/"):
        text = home.rstrip("/") + text[1:]  # a home of "/" gives "/x", not "//x"
    elif text.startswith("~"):
        raise BadPath("only the daemon user's own home (~) is known, not another user's")
    if not posixpath.isabs(text):
        raise BadPath("the path must be absolute or start with ~")
    return posixpath.normpath(text)


def parent(path: str) -> str | None:
    """The directory above `path` (None at the root)."""
    up = posixpath.dirname(path)
    return None if up == path else up
