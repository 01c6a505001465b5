"""What a file-changing tool call did, per file, for clients to render (docs/protocol.md, Item).

A `tool_result` of `apply_patch` or `edit_file` carries `changes`: one `FileDiff` per file with
its git-style diff, and for small text files the whole text before and after (what an ACP client
needs for its diff content). Pure: built from texts the tool already holds.
"""

from __future__ import annotations

from typing import Final, Literal, NotRequired, TypedDict

from openvaala_server.domain.patch import unified_diff

ChangeKind = Literal["add", "update", "delete", "move"]
# Texts past this many characters are left out (the diff is still there).
MAX_TEXT_CHARS: Final = 32_000
# A diff past this many characters is cut, with a notice line.
MAX_DIFF_CHARS: Final = 64_000
# What one result's changes may carry in all (texts and diffs): a patch of many files keeps its
# items and events a bounded size; past it, texts are left out, then diffs are named only.
MAX_TOTAL_CHARS: Final = 512_000


class FileDiff(TypedDict):
    path: str
    kind: ChangeKind
    diff: str
    movePath: NotRequired[str]
    oldText: NotRequired[str]
    newText: NotRequired[str]


def file_diff(
    old: str | None, new: str | None, path: str, move_path: str | None = None
) -> FileDiff:
    """One file's change; `old` None: created, `new` None: deleted, `move_path`: renamed."""
    kind: ChangeKind
    if old is None:
        kind = "add"
    elif new is None:
        kind = "delete"
    elif move_path is not None and move_path != path:
        kind = "move"
    else:
        kind = "update"
    diff = unified_diff(old, new, path, move_path or path)
    if len(diff) > MAX_DIFF_CHARS:
        cut = len(diff) - MAX_DIFF_CHARS
        diff = diff[:MAX_DIFF_CHARS] + f"\n[… {cut} characters of the diff left out …]\n"
    change: FileDiff = {"path": path, "kind": kind, "diff": diff}
    if kind == "move" and move_path is not None:
        change["movePath"] = move_path
    small = all(text is None or len(text) <= MAX_TEXT_CHARS for text in (old, new))
    if small:
        if old is not None:
            change["oldText"] = old
        if new is not None:
            change["newText"] = new
    return change


def binary_diff(path: str, kind: ChangeKind, move_path: str | None = None) -> FileDiff:
    """A change of a file that is not text: named, with no texts."""
    target = move_path or path
    gone = "/dev/null" if kind == "delete" else f"b/{target}"
    change: FileDiff = {
        "path": path,
        "kind": kind,
        "diff": f"diff --git a/{path} b/{target}\nBinary files a/{path} and {gone} differ\n",
    }
    if kind == "move" and move_path is not None:
        change["movePath"] = move_path
    return change


def bounded(changes: list[FileDiff], budget: int = MAX_TOTAL_CHARS) -> list[FileDiff]:
    """`changes` in order, within `budget` characters in all: a file whose texts do not fit
    keeps its diff only, and one whose diff does not fit either gets a line saying so."""
    out: list[FileDiff] = []
    for change in changes:
        texts = len(change.get("oldText", "")) + len(change.get("newText", ""))
        if texts + len(change["diff"]) <= budget:
            out.append(change)
            budget -= texts + len(change["diff"])
            continue
        slim: FileDiff = {"path": change["path"], "kind": change["kind"], "diff": change["diff"]}
        if "movePath" in change:
            slim["movePath"] = change["movePath"]
        if len(slim["diff"]) > budget:
            slim["diff"] = f"[the diff of {change['path']} is left out: the result is too large]\n"
        budget = max(0, budget - len(slim["diff"]))
        out.append(slim)
    return out
