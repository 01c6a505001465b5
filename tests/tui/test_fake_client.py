"""The fake client refuses what the daemon would never answer, so a terminal UI test cannot pass
against an answer the daemon does not give (tests/tui/fake_client.py)."""

from __future__ import annotations

import pytest

from openvaala_server.client import RpcError
from openvaala_server.errors import NotIdle
from openvaala_server.protocol.json_types import JsonObject
from tests.support.tree import tree_node
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import FakeMisuse, refusal


async def test_an_unknown_method_fails_loudly() -> None:
    fake = FakeClient()
    with pytest.raises(FakeMisuse, match="session/foo is no method"):
        await fake.request("session/foo", {})
    assert fake.misuses
    fake.misuses.clear()  # seen: the test's end does not fail on it


async def test_params_the_daemon_refuses_fail_loudly() -> None:
    fake = FakeClient()
    with pytest.raises(FakeMisuse, match='"mode" must be one of'):
        await fake.request(
            "input/send", {"conversationId": "a" * 32, "text": "hi", "mode": "later"}
        )
    fake.misuses.clear()


async def test_a_method_without_an_answer_fails_loudly() -> None:
    fake = FakeClient()
    with pytest.raises(FakeMisuse, match="no answer for conversation/tree"):
        await fake.request("conversation/tree", {"conversationId": "a" * 32})
    fake.misuses.clear()


async def test_a_tree_with_a_child_the_daemon_never_gives_fails_loudly() -> None:
    """A shape that holds itself is checked too, down to the child that is wrong."""
    child = tree_node("b" * 32, {"conversationId": "c" * 32})

    def tree(params: JsonObject) -> object:
        return {"conversationId": "a" * 32, "root": tree_node("a" * 32, child, kind="root")}

    fake = FakeClient({"conversation/tree": tree})
    with pytest.raises(FakeMisuse, match=r'"root.children\[0\].children\[0\].title" is required'):
        await fake.request("conversation/tree", {"conversationId": "a" * 32})
    fake.misuses.clear()


async def test_an_answer_the_daemon_never_gives_fails_loudly() -> None:
    def partial_row(params: JsonObject) -> object:
        return {"conversations": [{"conversationId": "a" * 32}]}  # no title, cwd, …

    fake = FakeClient({"conversation/list": partial_row})
    with pytest.raises(FakeMisuse, match="is no ListResult"):
        await fake.request("conversation/list", {})
    fake.misuses.clear()


async def test_a_notification_the_daemon_never_sends_fails_loudly() -> None:
    fake = FakeClient()
    cid = (await fake.request("conversation/create", {"cwd": "/p"}))["conversation"]
    await fake.subscribe(cid["conversationId"])
    with pytest.raises(FakeMisuse, match="is no ItemCompletedNote"):
        fake.emit("item/completed", {"sessionId": "s"})
    fake.misuses.clear()


async def test_a_refusal_is_the_daemons_error() -> None:
    def refuse(params: JsonObject) -> object:
        raise refusal(NotIdle("a turn is running"))

    fake = FakeClient({"conversation/compact": refuse})
    with pytest.raises(RpcError) as caught:
        await fake.request("conversation/compact", {"conversationId": "a" * 32})
    assert caught.value.kind == "not_idle"
    assert not fake.misuses
