"""A session's request history is assembled from what changed since its last call
(models/assembly.py, runtime/contexts.py), and the bodies are exactly what assembling the whole
context gives, in all three wire formats.

The runtime hands a provider the session's context list, extended in place by appends
(`ContextMemo`); these tests do the same, and also hand fresh lists (another caller, a history
read back), shrink and rewrite the history (compaction summaries, a rewound copy), and check every
body against a fresh provider's and the uncached conversion.
"""

from __future__ import annotations

import copy
import gc
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from openvaala_server.domain.context import context_items
from openvaala_server.domain.images import ImageRef
from openvaala_server.domain.records import Item
from openvaala_server.models.base import ModelRequest
from openvaala_server.runtime.contexts import ContextMemo
from tests.server.models.test_wire_cache import (
    TOOLS,
    Provider,
    agent,
    call,
    histories,
    history_of,
    item,
    providers,
    result,
    steps,
    uncached,
    user,
)


class Owner:
    """Stands for a session: what a provider keeps its prefix for (weakly)."""


def body_of(provider: Provider, items: list[Item], owner: Owner | None, **extra: Any) -> Any:
    request = ModelRequest(provider.config, "SYS", items, TOOLS, owner=owner, **extra)
    return provider.build_body(request)


def assert_same_as_whole(provider: Provider, items: list[Item], owner: Owner, **extra: Any) -> Any:
    body = body_of(provider, items, owner, **extra)
    fresh = type(provider)(provider.config)
    assert body == fresh.build_body(ModelRequest(provider.config, "SYS", items, TOOLS, **extra))
    if not extra:
        assert history_of(body) == uncached(provider, ModelRequest(provider.config, "SYS", items))
    return body


def long_history(turns: int) -> list[Item]:
    out: list[Item] = []
    for n in range(turns):
        out += [user(f"q{n}"), call(f"c{n}"), result(f"c{n}", "x" * 20), agent(f"a{n}")]
    return out


def test_the_second_call_assembles_only_what_was_appended() -> None:
    for provider in providers():
        owner, memo = Owner(), ContextMemo()
        history = long_history(2_500)  # 10,000 items
        assert_same_as_whole(provider, memo.context(history, ()), owner)
        assembler = provider.assembler
        folded, converted = assembler.folded, assembler.cache.conversions
        history += [user("one more"), call("c-new")]
        assert_same_as_whole(provider, memo.context(history, ()), owner)
        # The last turn before it (4 items, now an earlier turn) and the 2 new ones; 1 synthetic
        # result for the open call. Only the 2 new items were converted.
        assert assembler.folded - folded == 4 + 2 + 1
        assert assembler.cache.conversions - converted == 2 + 1
        assert memo.computed == 1  # the context followed the append


def test_a_50k_context_converts_only_what_is_new_at_every_call() -> None:
    provider = providers()[0]
    owner, memo = Owner(), ContextMemo()
    history = long_history(12_500)  # 50,000 items: more than the cache's minimum generations
    body_of(provider, memo.context(history, ()), owner)
    cache = provider.assembler.cache
    for n in range(3):
        converted = cache.conversions
        history += [agent(f"more {n}"), user(f"next {n}")]
        body = body_of(provider, memo.context(history, ()), owner)
        assert cache.conversions - converted == 2
    assert len(history_of(body)) == 1 + 50_000 + 6  # the system prompt, then every item
    # Sized by what is live: no entry was dropped, so a rebuild (after a compaction, say)
    # converts nothing again.
    converted = cache.conversions
    assert_same_as_whole(provider, list(history), Owner())
    assert cache.conversions == converted


def test_bodies_over_a_session_with_compactions_equal_the_whole_assembly() -> None:
    for provider in providers():
        owner, memo = Owner(), ContextMemo()
        session: list[Item] = []
        built: list[tuple[list[Item], Any]] = []

        def check(
            session: list[Item] = session,
            provider: Provider = provider,
            memo: ContextMemo = memo,
            owner: Owner = owner,
            built: list[tuple[list[Item], Any]] = built,
        ) -> None:
            context = memo.context(session, ())
            body = assert_same_as_whole(provider, context, owner)
            built.append((list(context), copy.deepcopy(body)))

        for added in steps():
            session.extend(added)
            check()
        session.append(item("summary", text="so far", coversUpTo=session[-3]["itemId"]))
        check()
        session.extend([user("after the summary"), call("c6"), result("c6", "x")])
        check()
        session.extend([agent("ok"), user("again"), agent("done")])
        check()
        session.append(item("summary", text="later", coversUpTo=session[-2]["itemId"]))
        check()
        session.extend([agent("still here"), user("bye")])
        check()
        # Nothing kept (prefixes, cached wire forms) was modified by later calls.
        for context, body in built:
            assert body_of(provider, context, None) == body


def test_a_rewritten_history_is_assembled_again() -> None:
    """Another list whose items differ (a rewound copy, a history read back from disk) does not
    reuse the prefix, whatever its length."""
    for provider in providers():
        owner = Owner()
        history = long_history(5)
        assert_same_as_whole(provider, history, owner)
        # Equal items, other objects (read back from disk), one of them changed.
        copied = [cast(Item, dict(i)) for i in history]
        copied[2]["output"] = "changed"
        copied.append(user("q"))
        body = assert_same_as_whole(provider, copied, owner)
        assert "changed" in str(history_of(body))
        shorter = [*history[:6], user("instead")]  # rewound: cut, then another message
        assert_same_as_whole(provider, shorter, owner)


def test_images_in_the_prefix_follow_their_data() -> None:
    """An item's images are sent as the request's data says: a prefix holding one is assembled
    again when that data changes (a model with vision after one without, a file read back)."""
    ref: ImageRef = {"sha256": "ab" * 32, "mediaType": "image/png", "size": 3}
    for provider in providers():
        owner = Owner()
        history = [user("look"), item("user_message", text="this", images=[ref]), agent("ok")]
        history += [user("and now?")]
        without = assert_same_as_whole(provider, history, owner, images={})
        history += [agent("hm"), user("again")]
        seen = assert_same_as_whole(provider, history, owner, images={ref["sha256"]: "AAAA"})
        assert "AAAA" in str(history_of(seen)) and "AAAA" not in str(history_of(without))
        history += [agent("yes"), user("once more")]
        again = assert_same_as_whole(provider, history, owner, images={})
        assert "AAAA" not in str(history_of(again))


def test_a_warm_up_without_image_data_stops_before_the_first_image() -> None:
    ref: ImageRef = {"sha256": "cd" * 32, "mediaType": "image/png", "size": 3}
    for provider in providers():
        owner, assembler = Owner(), provider.assembler
        history = [*long_history(3), item("user_message", text="see", images=[ref])]
        history += [agent("seen"), *long_history(2), user("last")]
        assert assembler.prepare(owner, history, None, len(history)) == 12  # before the image
        data = {ref["sha256"]: "BBBB"}
        body = assert_same_as_whole(provider, history, owner, images=data)
        assert "BBBB" in str(history_of(body))
        # A warm-up that comes later leaves a prefix made with the data as it is.
        assert assembler.prepare(owner, history, None, len(history)) == len(history) - 1


def test_a_prefix_goes_with_its_owner_and_with_a_released_history() -> None:
    provider = providers()[1]
    assembler = provider.assembler
    owner, other = Owner(), Owner()
    history = [*long_history(3), user("go")]
    body_of(provider, history, owner)
    body_of(provider, list(history), other)
    assert len(assembler) == 2
    del owner
    gc.collect()
    assert len(assembler) == 1
    assembler.forget(history)  # runtime/residency.py let the history go
    assert len(assembler) == 0 and len(assembler.cache) == 0
    # An owner that cannot be held weakly gets a right body, and nothing is kept for it.
    assert body_of(provider, history, cast(Any, "a string")) == body_of(provider, history, None)
    assert len(assembler) == 0


@settings(max_examples=150, deadline=None)
@given(history=histories(), cuts=st.lists(st.integers(0, 25), max_size=6))
def test_random_sessions_equal_the_whole_assembly(history: list[Item], cuts: list[int]) -> None:
    for provider in providers():
        owner, memo = Owner(), ContextMemo()
        live: list[Item] = []
        for cut in [*sorted(cuts), len(history), *cuts]:
            if cut >= len(live) and history[: len(live)] == live:
                live.extend(history[len(live) : cut])  # appended: the runtime's case
            else:
                live = history[:cut]  # replaced whole
            assert_same_as_whole(provider, memo.context(live, ()), owner)
            assert_same_as_whole(provider, context_items(live), owner)  # another list


def test_context_memo_follows_appends_and_recomputes_otherwise() -> None:
    memo = ContextMemo()
    history = long_history(3)
    first = memo.context(history, ())
    history.append(user("more"))
    assert memo.context(history, ()) == context_items(history)
    assert memo.computed == 1
    assert first == context_items(history[:-1])  # a request keeps its items as they were
    history.append(item("summary", text="s", coversUpTo=history[5]["itemId"]))
    assert memo.context(history, ()) == context_items(history)
    assert memo.context(history, [history[2]["itemId"]]) == context_items(
        history, [history[2]["itemId"]]
    )
    replaced = list(history)
    assert memo.context(replaced, [history[2]["itemId"]]) == context_items(
        replaced, [history[2]["itemId"]]
    )
    assert memo.computed == 4
