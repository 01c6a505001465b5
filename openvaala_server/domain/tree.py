"""The conversation tree: forks and rewinds under the conversation they came from.

Pure: built from conversation summaries (their `forkedFrom`), as `conversation/tree` returns it
(docs/protocol.md). A conversation whose parent is gone becomes a root of its own tree, marked
`parentMissing`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict


class TreeNode(TypedDict):
    conversationId: str
    title: str
    kind: str  # "root" | "fork" | "rewind"
    parentId: str | None
    branchPoint: str | None  # the parent's last item the branch copied (its upToItemId)
    parentMissing: bool
    createdAt: str
    updatedAt: str
    archived: bool
    status: str
    children: list[TreeNode]


def parent_of(summary: Mapping[str, object]) -> str | None:
    forked = summary.get("forkedFrom")
    if isinstance(forked, dict) and isinstance(forked.get("conversationId"), str):
        return str(forked["conversationId"])
    return None


def root_of(cid: str, summaries: Mapping[str, Mapping[str, object]]) -> str:
    seen = {cid}
    current = cid
    while (parent := parent_of(summaries[current])) is not None and parent in summaries:
        if parent in seen:  # a cycle cannot be written, but a hand-edited file could hold one
            break
        seen.add(parent)
        current = parent
    return current


def build(root: str, summaries: Mapping[str, Mapping[str, object]]) -> TreeNode:
    """The tree under `root`, children oldest first."""
    children: dict[str, list[str]] = {}
    for cid, summary in summaries.items():
        parent = parent_of(summary)
        if parent is not None and parent in summaries and cid != root:
            children.setdefault(parent, []).append(cid)

    def node(cid: str, depth: int) -> TreeNode:
        summary = summaries[cid]
        raw = summary.get("forkedFrom")
        forked = raw if isinstance(raw, dict) else None
        parent = parent_of(summary)
        kids = sorted(children.get(cid, []), key=lambda c: str(summaries[c].get("createdAt")))
        return {
            "conversationId": cid,
            "title": str(summary.get("title") or ""),
            "kind": str(forked.get("kind") or "fork") if forked else "root",
            "parentId": parent,
            "branchPoint": _str_or_none(forked.get("upToItemId")) if forked else None,
            "parentMissing": parent is not None and parent not in summaries,
            "createdAt": str(summary.get("createdAt") or ""),
            "updatedAt": str(summary.get("updatedAt") or ""),
            "archived": bool(summary.get("archived")),
            "status": str(summary.get("status") or "idle"),
            "children": [node(k, depth + 1) for k in kids] if depth < 256 else [],
        }

    return node(root, 0)


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
