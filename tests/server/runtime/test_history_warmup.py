"""A conversation opened from disk is made ready for its first model call in the background, and
let go of memory when nobody uses it (docs/design.md, "Performance at scale";
runtime/warmup.py, runtime/residency.py).

In-process, with real parts: a `ConversationManager` on the real store (a temporary data
directory, the conversation written with the store's own writer) and the OpenAI-compatible
provider the registry makes (never called: its wire cache is what is looked at)."""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import AsyncIterator
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, cast

import pytest

from openvaala_server.config import parse_config
from openvaala_server.domain import records as r
from openvaala_server.domain import usage
from openvaala_server.domain.ids import new_id
from openvaala_server.models.base import ModelRequest
from openvaala_server.models.http import WireCache
from openvaala_server.models.openai_chat import OpenAIChatProvider
from openvaala_server.runtime import contexts, warmup
from openvaala_server.runtime.conversation import LiveConversation
from openvaala_server.runtime.item_factory import new_item
from openvaala_server.runtime.manager import ConversationManager
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.support.supervisor import owned

ITEMS = 2_000
CONFIG = """
[models.http]
provider = "openai"
model = "m"
base_url = "http://127.0.0.1:9/v1"
context_window = 10000000
max_output_tokens = 1000

[models.other]
provider = "openai"
model = "m2"
base_url = "http://127.0.0.1:9/v1"
context_window = 10000000
max_output_tokens = 1000

[agents.default]
description = "test"
model = "http"
"""


class Watcher:
    def deliver(self, frame: str) -> None:
        pass


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncIterator[tuple[ConversationManager, str, list[str]]]:
    store = await Store.open(DataDir(tmp_path / "home"))
    cid, sid = new_id(), new_id()
    await store.create_conversation(
        {
            "conversationId": cid,
            "cwd": str(tmp_path),
            "agent": "default",
            "model": "http",
            "title": "Two thousand items",
            "titleSource": "user",
            "rootSessionId": sid,
            "forkedFrom": None,
            "formatVersion": r.FORMAT_VERSION,
        }
    )
    items: list[dict[str, Any]] = []
    for n in range(ITEMS):
        kind = r.USER_MESSAGE if n % 2 == 0 else r.AGENT_MESSAGE
        items.append(
            {
                "itemId": new_id(),
                "type": kind,
                "sessionId": sid,
                "turnId": f"{n // 2:032x}",
                "createdAt": r.utc_now(),
                "status": r.COMPLETED,
                "text": f"text {n}",
            }
        )
    await store.append_items(cid, sid, cast("list[r.Item]", items))
    runtime = ConversationManager(parse_config(tomllib.loads(CONFIG)), store)
    # The runtime's supervisor owns the history's loading and warm-up, as in the daemon.
    async with owned(runtime.tasks, partial(runtime.shutdown, timeout=10)):
        yield runtime, cid, [i["itemId"] for i in items]
    await store.close()


async def test_the_first_request_after_an_open_converts_nothing_and_a_release_lets_go(
    opened: tuple[ConversationManager, str, list[str]],
) -> None:
    runtime, cid, ids = opened
    conv = await runtime.open(cid)
    root = conv.root
    assert len(root.items) == 100 and not root.history_complete  # the first page only
    await conv.ensure_history()
    assert conv.warming is not None
    await asyncio.wait_for(conv.warming.wait(), 10)
    cache = getattr(runtime.provider("http"), "wire_cache", None)
    assert isinstance(cache, WireCache)
    # Every item was converted in the background, and estimated: the first request finds them.
    assert cache.conversions == ITEMS
    assert all(i["itemId"] in usage._ESTIMATES for i in root.items)
    request = ModelRequest(
        model=runtime.model_config("http"),
        instructions=conv.instructions_for(root),
        items=conv.model_context(root),
        tools=[],
    )
    body = runtime.provider("http").build_body(request)  # type: ignore[attr-defined]
    assert len(body["messages"]) == ITEMS + 1  # the system prompt, then every item
    assert cache.conversions == ITEMS  # nothing converted on the request's path

    # Watched, it keeps everything; once the last watcher leaves, it keeps the last page only,
    # and neither the wire cache nor the estimates hold the rest.
    watcher = Watcher()
    conv.hub.subscribe(watcher)
    conv.hub.unsubscribe(watcher)
    assert [i["itemId"] for i in root.items] == ids[-100:]
    assert not root.history_complete
    assert len(cache) == 0
    assert conv.residency.freeing is not None
    await asyncio.wait_for(conv.residency.freeing, 10)  # in a worker thread
    assert not any(i in usage._ESTIMATES for i in ids[:-100])

    # What needs it reads it back: the same history.
    await conv.ensure_history()
    assert [i["itemId"] for i in conv.root.items] == ids


def turn_request(runtime: ConversationManager, conv: LiveConversation) -> ModelRequest:
    """The request a turn of the root session builds (runtime/turn.py `_request`)."""
    return ModelRequest(
        model=runtime.model_config("http"),
        instructions=conv.instructions_for(conv.root),
        items=conv.model_context(conv.root),
        tools=[],
        owner=conv.root,
    )


async def test_the_first_request_after_an_open_assembles_only_what_was_appended(
    opened: tuple[ConversationManager, str, list[str]],
) -> None:
    runtime, cid, ids = opened
    conv = await runtime.open(cid)
    root = conv.root
    await conv.ensure_history()
    assert conv.warming is not None
    await asyncio.wait_for(conv.warming.wait(), 10)
    provider = cast(OpenAIChatProvider, runtime.provider("http"))
    assembler = provider.assembler
    assert len(assembler) == 1  # the warm-up assembled the root's context up to its last turn
    folded, converted = assembler.folded, assembler.cache.conversions

    async def send(text: str) -> dict[str, Any]:
        message = new_item(r.USER_MESSAGE, root.session_id, None, status=r.COMPLETED, text=text)
        await conv.persist_items(root, [message])
        request = turn_request(runtime, conv)
        body = provider.build_body(request)
        assert body == OpenAIChatProvider(provider.config).build_body(replace(request, owner=None))
        return cast("dict[str, Any]", body)

    body = await send("one more question")
    assert len(body["messages"]) == 1 + ITEMS + 1
    # The last turn of the history (a user message and its answer) and the new message.
    assert assembler.folded - folded == 3
    assert assembler.cache.conversions - converted == 1
    memo = contexts.memo_of(root)
    assert memo is not None and memo.computed == 1  # the context followed the append

    # A compaction summary changes the context: both are computed afresh, and still exact.
    summary = new_item(
        r.SUMMARY, root.session_id, None, status=r.COMPLETED, text="all", coversUpTo=ids[-1]
    )
    await conv.persist_items(root, [summary])
    body = await send("after the summary")
    assert len(body["messages"]) == 1 + 1 + 2  # system, summary, the last two messages
    assert memo.computed == 2

    # Let go of memory: nothing kept holds the history any more.
    watcher = Watcher()
    conv.hub.subscribe(watcher)
    conv.hub.unsubscribe(watcher)
    assert not root.history_complete
    assert len(assembler) == 0 and len(assembler.cache) == 0
    assert contexts.memo_of(root) is None


async def test_a_request_after_a_release_catches_up_a_step_at_a_time(
    opened: tuple[ConversationManager, str, list[str]],
) -> None:
    """Read back after a release, the history is not warmed up: the request assembles it in
    steps, between which the loop serves others, before its body is built."""
    runtime, cid, _ = opened
    conv = await runtime.open(cid)
    await conv.ensure_history()
    assert conv.warming is not None
    await asyncio.wait_for(conv.warming.wait(), 10)
    watcher = Watcher()
    conv.hub.subscribe(watcher)
    conv.hub.unsubscribe(watcher)
    provider = cast(OpenAIChatProvider, runtime.provider("http"))
    assert len(provider.assembler) == 0  # let go with the history
    await conv.ensure_history()
    root = conv.root
    message = new_item(r.USER_MESSAGE, root.session_id, None, status=r.COMPLETED, text="back")
    await conv.persist_items(root, [message])
    request = turn_request(runtime, conv)
    steps = 0

    async def count() -> None:
        nonlocal steps
        while True:
            await asyncio.sleep(0)
            steps += 1

    counter = asyncio.create_task(count())
    await warmup.catch_up(provider, request)
    counter.cancel()
    assert steps >= ITEMS // warmup.STEP - 1  # the loop ran between the steps
    # Assembled up to the last turn of the history: that turn and the new message are left.
    assert provider.assembler.prepare(root, request.items, request.images, 0) == ITEMS - 2
    body = provider.build_body(request)
    assert body == OpenAIChatProvider(provider.config).build_body(replace(request, owner=None))


async def test_a_warm_up_gives_way_to_a_turn_that_starts_meanwhile(
    opened: tuple[ConversationManager, str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn's request assembles from a newer context than the warm-up's: a warm-up that went
    on would find the prefix past its own context, and build it again from the start."""
    runtime, cid, _ = opened
    conv = await runtime.open(cid)
    await conv.ensure_history()
    assert conv.warming is not None
    await asyncio.wait_for(conv.warming.wait(), 10)
    provider = cast(OpenAIChatProvider, runtime.provider("http"))
    assembler = provider.assembler
    assembler.clear()  # as if just opened
    monkeypatch.setattr(warmup, "STEP", 100)
    root = conv.root
    warming = asyncio.create_task(warmup.prepare(conv, root))
    for _ in range(3):  # a few of its steps
        await asyncio.sleep(0)
    assert not warming.done()
    message = new_item(r.USER_MESSAGE, root.session_id, None, status=r.COMPLETED, text="now")
    root.items.append(message)  # what `persist_items` does once the store has it
    request = turn_request(runtime, conv)
    body = provider.build_body(request)  # in one go: the warm-up has not gone on meanwhile
    folded = assembler.folded
    await asyncio.wait_for(warming, 10)
    assert assembler.folded == folded  # the warm-up stopped
    assert body == OpenAIChatProvider(provider.config).build_body(replace(request, owner=None))
    # The next request finds the prefix where this one left it: at the new message.
    assert assembler.prepare(root, [*request.items, message], {}, 0) == ITEMS


async def test_the_newest_pages_are_read_without_waiting_for_the_whole_history(
    opened: tuple[ConversationManager, str, list[str]],
) -> None:
    runtime, cid, ids = opened
    conv = await runtime.open(cid)
    page = await runtime.read(cid, None, None, 20)
    assert [i["itemId"] for i in page["items"]] == ids[-20:] and page["hasMore"]
    page = await runtime.read(cid, None, ids[-20], 50)
    assert [i["itemId"] for i in page["items"]] == ids[-70:-20] and page["hasMore"]
    assert not conv.root.history_complete  # answered from the held page, the rest still loading
    # Past what is held, the journal answers the older part (tests/server/runtime/
    # test_paging_partial.py shows it does not wait for the rest).
    page = await runtime.read(cid, None, ids[-70], 100)
    assert [i["itemId"] for i in page["items"]] == ids[-170:-70] and page["hasMore"]
    await conv.ensure_history()


async def test_a_release_after_a_model_change_lets_go_of_the_earlier_models_prefix(
    opened: tuple[ConversationManager, str, list[str]],
) -> None:
    """The session was warmed up for its first model, then switched to another: when its history
    is let go, the first model's provider (still kept for other conversations) must not keep
    the prefix, and with it every item of the history."""
    runtime, cid, _ = opened
    conv = await runtime.open(cid)
    await conv.ensure_history()
    assert conv.warming is not None
    await asyncio.wait_for(conv.warming.wait(), 10)
    first = runtime.provider("http")
    assert len(first.assembler) == 1  # type: ignore[attr-defined]
    await runtime.set_model(cid, conv.root.session_id, "other")
    assert conv.root.model == "other"

    watcher = Watcher()
    conv.hub.subscribe(watcher)
    conv.hub.unsubscribe(watcher)
    assert not conv.root.history_complete
    assert len(first.assembler) == 0  # type: ignore[attr-defined]
    assert len(first.assembler.cache) == 0  # type: ignore[attr-defined]


async def test_a_watched_session_goes_back_to_its_context_once_a_summary_covers_the_rest(
    opened: tuple[ConversationManager, str, list[str]],
) -> None:
    """Subscribed, a session holds its model context (docs/design.md, "Subscribed sessions hold
    their context"): all of it while nothing is summarized, from the covered item on once a
    summary is there; what the model gets and every page stay the same."""
    runtime, cid, ids = opened
    conv = await runtime.open(cid)
    watcher = Watcher()
    conv.hub.subscribe(watcher)
    await conv.ensure_history()
    root = conv.root
    conv.residency.check()
    assert root.history_complete and len(root.items) == ITEMS  # no summary: all of it is context
    summary = new_item(
        r.SUMMARY, root.session_id, None, status=r.COMPLETED, text="sum", coversUpTo=ids[1_500]
    )
    await conv.persist_items(root, [summary], count_in_usage=False)
    conv.residency.check()
    assert [i["itemId"] for i in root.items] == [*ids[1_500:], summary["itemId"]]
    assert root.context_held and not root.history_complete and root.held_from == 1_500
    assert [i["itemId"] for i in conv.model_context(root)] == [summary["itemId"], *ids[1_501:]]
    page = await runtime.read(cid, None, ids[1_000], 10)
    assert [i["itemId"] for i in page["items"]] == ids[990:1_000] and page["hasMore"]
    assert not root.history_complete  # paged from the journal, not read whole
