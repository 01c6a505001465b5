"""Paging a fork made after compactions through the real daemon: its root history is its
original's older items (marked `fromConversationId`) followed by its own, with a pinned message
it copied shown once, in place; every page of every size, from every cursor, is the matching
slice of that history (docs/protocol.md, conversation/read; docs/design.md, "Performance at
scale")."""

from __future__ import annotations

from typing import Any

import pytest

from openvaala_server.client import Client, RpcError
from tests.e2e.test_context_steering_e2e import BIG, _setup
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.events import run_turn


async def _read(client: Client, cid: str, before: str | None, limit: int) -> dict[str, Any]:
    params: dict[str, Any] = {"conversationId": cid, "limit": limit}
    if before is not None:
        params["beforeItem"] = before
    result: dict[str, Any] = await client.request("conversation/read", params)
    return result


async def test_every_page_of_a_fork_after_compactions_is_a_slice_of_its_joined_history(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _setup(daemon_factory, fake_openai)
    fake_openai.enqueue(
        Reply().text("first answer").usage(300, 20),
        Reply().text("SUMMARY-ONE"),
        Reply().text("second answer").usage(400, 20),
        Reply().text("SUMMARY-TWO"),
        Reply().text("third answer").usage(400, 20),
        Reply().text("fourth answer"),
    )
    await run_turn(client, cid, "PINNED: keep this")
    original = (await _read(client, cid, None, 1000))["items"]
    pin = next(i["itemId"] for i in original if i.get("text") == "PINNED: keep this")
    await client.request("conversation/pin", {"conversationId": cid, "itemId": pin})
    await run_turn(client, cid, BIG)
    await run_turn(client, cid, BIG + "y")
    original = (await _read(client, cid, None, 1000))["items"]
    assert [i["type"] for i in original].count("summary") == 2
    forked: Any = (await client.request("conversation/fork", {"conversationId": cid}))[
        "conversation"
    ]
    fid = forked["conversationId"]
    covers = forked["forkedFrom"]["olderHistory"]["upToItemId"]
    await client.subscribe(fid)
    await run_turn(client, fid, "after the fork")

    whole = (await _read(client, fid, None, 1000))["items"]
    # The original's items up to what the last summary covers, marked; then the fork's own.
    cut = next(n for n, i in enumerate(original) if i["itemId"] == covers) + 1
    assert [i["itemId"] for i in whole[:cut]] == [i["itemId"] for i in original[:cut]]
    assert all(i["fromConversationId"] == cid for i in whole[:cut])
    assert not any("fromConversationId" in i for i in whole[cut:])
    assert [i["itemId"] for i in whole].count(pin) == 1
    assert whole[cut]["type"] == "summary" and "SUMMARY-TWO" in whole[cut]["text"]
    assert [i.get("text") for i in whole[-2:]] == ["after the fork", "fourth answer"]
    ids = [i["itemId"] for i in whole]
    assert len(set(ids)) == len(ids)

    for limit in (1, 2, 3, 7):
        # From the end back to the start, page by page: the whole history, in order.
        before: str | None = None
        pages: list[dict[str, Any]] = []
        while True:
            page = await _read(client, fid, before, limit)
            pages[:0] = page["items"]
            if not page["hasMore"]:
                break
            before = page["items"][0]["itemId"]
        assert pages == whole, limit
    for at, item in enumerate(whole):
        # Any item as the cursor, the pinned one included: the items just before it.
        page = await _read(client, fid, item["itemId"], 4)
        assert page["items"] == whole[max(0, at - 4) : at], at
        assert page["hasMore"] == (at > 4), at
    with pytest.raises(RpcError) as unknown:
        await _read(client, fid, "f" * 32, 4)
    assert unknown.value.kind == "not_found"
    await client.close()
