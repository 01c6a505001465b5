"""Short conversation ids: the lists show the first `SHORT_ID` characters of an id, and every
command that takes an id accepts any unique prefix of at least `MIN_PREFIX` (docs/design.md,
"Short ids"). Pure: the caller supplies the ids to match against."""

from __future__ import annotations

import string
from collections.abc import Iterable

SHORT_ID = 8  # what `openvaala list` and the TUI's lists show
MIN_PREFIX = 6  # shorter prefixes would often be ambiguous, and a typo would match by chance
FULL_ID = 32
_HEX = frozenset(string.hexdigits.lower())


class IdPrefixError(ValueError):
    """The typed id names no conversation, or more than one; the message says which."""


def short_ids(ids: Iterable[str]) -> dict[str, str]:
    """Each id's short form in a list of them: `SHORT_ID` characters, or more where two ids
    share those (as git lengthens an abbreviation), so every id shown names one conversation."""
    ordered = sorted(set(ids))
    shown: dict[str, str] = {}
    for i, cid in enumerate(ordered):
        shared = max(
            (_common(cid, ordered[j]) for j in (i - 1, i + 1) if 0 <= j < len(ordered)),
            default=0,
        )
        shown[cid] = cid[: max(SHORT_ID, shared + 1)]
    return shown


def _common(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def normalize(typed: str) -> str:
    """`typed` lowered and checked to be a possible id prefix; IdPrefixError if it cannot be."""
    prefix = typed.strip().lower()
    if not prefix or not set(prefix) <= _HEX or len(prefix) > FULL_ID:
        raise IdPrefixError(
            f"{typed!r} is not a conversation id: ids are hexadecimal (`openvaala list` shows them)"
        )
    if len(prefix) < MIN_PREFIX:
        raise IdPrefixError(
            f"conversation id {typed!r} is too short: give at least {MIN_PREFIX} characters"
        )
    return prefix


def match(typed: str, ids: Iterable[str]) -> str:
    """The one id in `ids` that starts with `typed`, else IdPrefixError naming why."""
    prefix = normalize(typed)
    found = sorted({cid for cid in ids if cid.startswith(prefix)})
    if not found:
        raise IdPrefixError(
            f"no conversation id starts with {prefix} (`openvaala list --all` lists them)"
        )
    if len(found) > 1:
        shown = ", ".join(cid[: len(prefix) + 4] for cid in found[:5])
        more = f" and {len(found) - 5} more" if len(found) > 5 else ""
        raise IdPrefixError(
            f"conversation id {prefix} is ambiguous: {shown}{more} start with it; "
            "type more characters"
        )
    return found[0]
