"""What a file-changing call would do, per file, shown before it runs (docs/protocol.md, Approvals).

An `approval/requested` of `write_file`, `edit_file` or `apply_patch` carries `diffs`: one
`ProposedDiff` per file the call would change, so the user reviews the change itself, not only a
path. Pure: built from the texts the tool's preview read. Bounded like a result's `changes`
(domain/diffs.py): a diff past `MAX_UNIFIED_CHARS` is cut (`truncated`), a text past
`MAX_TEXT_CHARS` is left out (None), and past `MAX_TOTAL_CHARS` for one approval the texts, then
the diffs, are left out.
"""

from __future__ import annotations

from typing import Final, Literal, TypedDict

from openvaala_server.domain.diffs import MAX_DIFF_CHARS, MAX_TEXT_CHARS, MAX_TOTAL_CHARS
from openvaala_server.domain.patch import unified_diff

ProposedKind = Literal["add", "update", "delete"]
MAX_UNIFIED_CHARS: Final = MAX_DIFF_CHARS


class ProposedDiff(TypedDict):
    path: str  # absolute, symlinks resolved: where the call would write
    kind: ProposedKind
    unified: str  # a git-style unified diff, cut at MAX_UNIFIED_CHARS
    truncated: bool  # `unified` was cut
    oldText: str | None  # the whole text before; None: absent, binary or too large
    newText: str | None  # the whole text after; None: deleted, binary or too large


def proposed_diff(path: str, shown: str, old: str | None, new: str | None) -> ProposedDiff:
    """One file's proposed change: `old` None: created, `new` None: deleted. `shown` names the
    file in the diff's header (as the user reads it: relative to the working directory)."""
    kind: ProposedKind = "add" if old is None else "delete" if new is None else "update"
    unified = unified_diff(old, new, shown, shown)
    truncated = len(unified) > MAX_UNIFIED_CHARS
    if truncated:
        cut = len(unified) - MAX_UNIFIED_CHARS
        unified = unified[:MAX_UNIFIED_CHARS] + f"\n[… {cut} characters of the diff left out …]\n"
    small = all(text is None or len(text) <= MAX_TEXT_CHARS for text in (old, new))
    return {
        "path": path,
        "kind": kind,
        "unified": unified,
        "truncated": truncated,
        "oldText": old if small else None,
        "newText": new if small else None,
    }


def binary_proposed(path: str, shown: str, kind: ProposedKind) -> ProposedDiff:
    """A proposed change of a file that is not text (or too large to read): named, no texts."""
    gone = "/dev/null" if kind == "delete" else f"b/{shown}"
    unified = f"diff --git a/{shown} b/{shown}\nBinary files a/{shown} and {gone} differ\n"
    return {
        "path": path,
        "kind": kind,
        "unified": unified,
        "truncated": False,
        "oldText": None,
        "newText": None,
    }


def bounded_proposed(
    diffs: list[ProposedDiff], budget: int = MAX_TOTAL_CHARS
) -> list[ProposedDiff]:
    """`diffs` in order within `budget` characters in all: a file whose texts do not fit keeps
    its diff only; one whose diff does not fit either keeps a line saying so (`truncated`)."""
    out: list[ProposedDiff] = []
    for diff in diffs:
        texts = len(diff["oldText"] or "") + len(diff["newText"] or "")
        if texts + len(diff["unified"]) <= budget:
            out.append(diff)
            budget -= texts + len(diff["unified"])
            continue
        slim: ProposedDiff = {**diff, "oldText": None, "newText": None}
        if len(slim["unified"]) > budget:
            slim["unified"] = f"[the diff of {diff['path']} is left out: the change is too large]\n"
            slim["truncated"] = True
        budget = max(0, budget - len(slim["unified"]))
        out.append(slim)
    return out
