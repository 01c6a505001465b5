"""A node of `conversation/tree`'s answer (domain/tree.py `TreeNode`), as the daemon sends it."""

from __future__ import annotations

from typing import Any


def tree_node(cid: str, *children: dict[str, Any], kind: str = "fork") -> dict[str, Any]:
    return {
        "conversationId": cid,
        "title": f"title of {cid}",
        "kind": kind,
        "parentId": None,
        "branchPoint": None,
        "parentMissing": False,
        "createdAt": "2026-12-06T10:00:00Z",
        "updatedAt": "2026-12-06T10:00:00Z",
        "archived": False,
        "status": "idle",
        "children": list(children),
    }
