"""A shape that holds itself (protocol/validate.py): the check ends, takes a right value at any
depth and names a wrong one by its whole path, as for any other shape."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

import pytest

from openvaala_server.errors import InvalidParams
from openvaala_server.protocol import payloads as p
from openvaala_server.protocol.validate import check
from tests.support.tree import tree_node


class Chain(TypedDict):
    """Itself through a union with null and through a list (`TreeNode` has only the list)."""

    name: str
    next: Chain | None
    also: NotRequired[list[Chain]]


def deep(depth: int) -> dict[str, Any]:
    tree = tree_node(f"c{depth}")
    for level in range(depth - 1, 0, -1):
        tree = tree_node(f"c{level}", tree_node(f"leaf{level}"), tree)
    return tree


def refused(shape: type, value: dict[str, Any]) -> tuple[str, object]:
    """The message and param of the refusal of `value`, read as the daemon sends it (a null is a
    value)."""
    with pytest.raises(InvalidParams) as caught:
        check(shape, value, null_is_absent=False)
    return caught.value.message, caught.value.data["param"]


def test_a_tree_is_checked_at_every_depth() -> None:
    check(p.TreeResult, {"conversationId": "c1", "root": deep(60)}, null_is_absent=False)

    wrong = deep(3)
    wrong["children"][1]["children"][0]["title"] = 5
    assert refused(p.TreeResult, {"conversationId": "c1", "root": wrong}) == (
        '"root.children[1].children[0].title" must be a string',
        "root",
    )
    del wrong["children"][1]["children"][0]["title"]
    assert refused(p.TreeResult, {"conversationId": "c1", "root": wrong}) == (
        '"root.children[1].children[0].title" is required',
        "root",
    )
    wrong["children"][1]["children"] = ["not a node"]
    assert refused(p.TreeResult, {"conversationId": "c1", "root": wrong}) == (
        '"root.children[1].children[0]" must be an object',
        "root",
    )
    assert refused(p.TreeResult, {"conversationId": "c1", "root": "not a node"}) == (
        '"root" must be an object',
        "root",
    )


def test_a_shape_that_holds_itself_through_null_and_lists() -> None:
    check(Chain, {"name": "a", "next": {"name": "b", "next": None}}, null_is_absent=False)
    check(
        Chain,
        {"name": "a", "next": None, "also": [{"name": "b", "next": None, "also": []}]},
        null_is_absent=False,
    )

    inner = {"name": "b", "next": {"name": 3, "next": None}}
    assert refused(Chain, {"name": "a", "next": inner}) == (
        '"next.next.name" must be a string',
        "next",
    )
    assert refused(Chain, {"name": "a", "next": {"name": "b", "next": 7}}) == (
        '"next.next" must be an object or null',
        "next",
    )
    also = [{"name": "b", "next": None, "also": [1]}]
    assert refused(Chain, {"name": "a", "next": None, "also": also}) == (
        '"also[0].also[0]" must be an object',
        "also",
    )
