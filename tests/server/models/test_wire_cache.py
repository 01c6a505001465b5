"""Request assembly reuses finished items' wire forms: the bodies must not change by it.

Each provider keeps an `http.WireCache` of the per-item part of its conversion. These tests drive
one long-lived provider per format through a growing session — tool calls, parallel calls with
text between them, interrupts (synthetic results), notices, reasoning of both providers, new user
turns (which move the Responses reasoning cut), compaction summaries and orphan results — and
check every body against the uncached conversion and a fresh provider's. Earlier bodies are
rebuilt at the end to catch any mutation of shared cached objects.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from openvaala_server.config import ModelConfig
from openvaala_server.domain.context import context_items
from openvaala_server.domain.records import Item
from openvaala_server.models import anthropic, http, openai_chat, openai_responses
from openvaala_server.models.base import ModelRequest, ToolSpec
from openvaala_server.models.http import INTERRUPTED_RESULT, WireCache, pair_tool_calls

TOOLS = [ToolSpec("shell", "Run a command", {"type": "object"})]
_ids = itertools.count()

Provider = (
    openai_chat.OpenAIChatProvider
    | anthropic.AnthropicProvider
    | openai_responses.OpenAIResponsesProvider
)


def config(provider: str, reasoning_context: str | None = None) -> ModelConfig:
    return ModelConfig(
        name=provider,
        provider=provider,
        model="m",
        context_window=100_000,
        max_output_tokens=1_000,
        base_url="http://localhost:1/v1",
        reasoning_context=reasoning_context,
    )


def providers() -> list[Provider]:
    return [
        openai_chat.OpenAIChatProvider(config("openai")),
        anthropic.AnthropicProvider(config("anthropic")),
        openai_responses.OpenAIResponsesProvider(config("openai_responses")),
        openai_responses.OpenAIResponsesProvider(config("openai_responses", "all_turns")),
    ]


def uncached(provider: Provider, request: ModelRequest) -> list[Any]:
    """The messages/input without any cache (the plain per-item conversion)."""
    if isinstance(provider, openai_chat.OpenAIChatProvider):
        return openai_chat.to_messages(request)
    if isinstance(provider, anthropic.AnthropicProvider):
        return anthropic.to_messages(request.items)
    return openai_responses.to_input(request.items, provider.reasoning_context)


def history_of(body: Mapping[str, object]) -> Any:
    return body.get("messages", body.get("input"))


def item(kind: str, status: str = "completed", **fields: Any) -> Item:
    return cast(Item, {"itemId": f"i{next(_ids)}", "type": kind, "status": status, **fields})


def user(text: str) -> Item:
    return item("user_message", text=text)


def agent(text: str, status: str = "completed") -> Item:
    return item("agent_message", status, text=text)


def call(call_id: str, status: str = "completed") -> Item:
    return item("tool_call", status, callId=call_id, name="shell", arguments={"cmd": call_id})


def result(call_id: str, output: str = "ok", error: bool = False) -> Item:
    return item("tool_result", callId=call_id, name="shell", output=output, isError=error)


def reasoning(text: str, provider: str) -> Item:
    data: dict[str, Any] = {"provider": provider}
    if provider == "anthropic":
        data["signature"] = f"sig-{text}"
    else:
        data.update(id=f"rs-{text}", encrypted_content=f"enc-{text}", summary=[])
    return item("reasoning", text=text, providerData=data)


def steps() -> list[list[Item]]:
    """What is appended to the session before each model call."""
    return [
        [user("list the files")],
        [reasoning("r1", "openai_responses"), reasoning("a1", "anthropic"), call("c1")],
        [result("c1", "a.txt b.txt")],
        [agent("Two files."), user("run both, in parallel")],
        [reasoning("r2", "openai_responses"), call("c2"), agent("and the other:"), call("c3")],
        [result("c3", "fine"), result("c2", "denied", error=True)],
        # Interrupted mid-step: partial text and a call that never ran (synthetic result).
        [agent("Let me also", "interrupted"), call("c4", "interrupted")],
        [item("notice", text="the previous turn was interrupted"), user("go on")],
        [agent("", "interrupted"), item("notice", text="the model failed")],
        [user("once more"), reasoning("r3", "openai_responses"), call("c5")],
        [result("c5", "done"), agent("   ")],
    ]


def test_cached_bodies_equal_uncached_over_a_session() -> None:
    for provider in providers():
        session: list[Item] = []
        built: list[tuple[ModelRequest, Any]] = []

        def check(
            request: ModelRequest,
            p: Provider = provider,
            built: list[tuple[ModelRequest, Any]] = built,
        ) -> None:
            body = p.build_body(request)
            fresh = type(p)(p.config).build_body(request)
            assert body == fresh
            assert history_of(body) == uncached(p, request)
            built.append((request, copy.deepcopy(body)))

        for added in steps():
            session.extend(added)
            check(ModelRequest(provider.config, "SYS", context_items(session), TOOLS))
        # Compaction: a summary covering all but the last call and its result; then more turns,
        # and a second summary whose kept part starts with an orphan result (becomes a note).
        session.append(
            item("summary", text="so far", coversUpTo=session[-3]["itemId"], turnId=None)
        )
        check(ModelRequest(provider.config, "SYS", context_items(session), TOOLS))
        session.extend([user("after the summary"), call("c6"), result("c6", "x")])
        check(ModelRequest(provider.config, "SYS", context_items(session), TOOLS))
        session.append(item("summary", text="later", coversUpTo=session[-2]["itemId"]))
        check(ModelRequest(provider.config, "SYS", context_items(session), TOOLS))
        session.extend([agent("still here"), user("bye")])
        check(ModelRequest(provider.config, "SYS", context_items(session), TOOLS))

        # Nothing cached was modified by later assembly: every earlier body comes out the same.
        for request, body in built:
            assert provider.build_body(request) == body
        # And the cache was used: each finished item converted once, the rest were hits.
        finished = {id(i) for request, _ in built for i in request.items}
        assert provider.wire_cache.conversions < 2 * len(finished)


def test_interrupted_call_gets_a_fresh_synthetic_result_every_time() -> None:
    for provider in providers():
        session = [user("do it"), call("c1", "interrupted"), user("stop")]
        request = ModelRequest(provider.config, "", session, [])
        first = provider.build_body(request)
        second = provider.build_body(request)
        assert first == second == type(provider)(provider.config).build_body(request)
        assert INTERRUPTED_RESULT in str(history_of(second))


def test_an_unfinished_item_is_not_cached() -> None:
    """A streaming item's dict changes in place until it is finished: never served stale."""
    for provider in providers():
        message = agent("Hel", "in_progress")
        session = [user("hi"), message]
        request = ModelRequest(provider.config, "", session, [])
        provider.build_body(request)
        message["text"] += "lo"
        message["status"] = "completed"
        body = provider.build_body(request)
        assert "Hello" in str(history_of(body))
        assert history_of(body) == uncached(provider, request)


def test_a_copy_of_an_item_is_converted_again() -> None:
    for provider in providers():
        original = user("first")
        provider.build_body(ModelRequest(provider.config, "", [original], []))
        changed: Item = {**original, "text": "second"}  # same itemId, another object
        body = provider.build_body(ModelRequest(provider.config, "", [changed], []))
        assert "second" in str(history_of(body))
        assert "first" not in str(history_of(body))


def test_the_cache_is_bounded() -> None:
    for provider in providers():
        cache = WireCache(provider.wire_cache.convert, minimum=8)
        cast(Any, provider).assembler.cache = cache
        session: list[Item] = []
        for n in range(30):
            session.extend([user(f"q{n}"), call(f"c{n}"), result(f"c{n}"), agent(f"a{n}")])
            request = ModelRequest(provider.config, "S", session[-12:], TOOLS)
            assert history_of(provider.build_body(request)) == uncached(provider, request)
            assert len(cache) <= 16


# -- randomized: any history, requests on growing prefixes, one long-lived provider --------------

KINDS = ["user_message", "agent_message", "reasoning", "tool_call", "tool_result", "notice"]


@st.composite
def histories(draw: st.DrawFn) -> list[Item]:
    out: list[Item] = []
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from([*KINDS, "tool_call", "tool_result", "summary"]))
        status = draw(st.sampled_from(["completed", "completed", "interrupted", "failed"]))
        fields: dict[str, Any] = {"text": draw(st.sampled_from(["", " ", "t", "more text"]))}
        if kind in ("tool_call", "tool_result"):
            fields.update(
                callId=draw(st.sampled_from(["a", "b", "c"])),
                name="shell",
                arguments={"x": 1},
                output="out",
                isError=draw(st.booleans()),
            )
        elif kind == "reasoning":
            fields["providerData"] = draw(
                st.sampled_from(
                    [
                        None,
                        {"provider": "anthropic", "signature": "s"},
                        {"provider": "anthropic", "redacted": "r"},
                        {"provider": "openai_responses", "id": "rs", "encrypted_content": "e"},
                    ]
                )
            )
        elif kind == "summary" and out:
            fields["coversUpTo"] = out[draw(st.integers(0, len(out) - 1))]["itemId"]
        out.append(item(kind, status, **fields))
    return out


@settings(max_examples=150, deadline=None)
@given(history=histories(), cuts=st.lists(st.integers(0, 25), max_size=6))
def test_random_sessions_cached_equals_uncached(history: list[Item], cuts: list[int]) -> None:
    for provider in providers():
        for cut in [*sorted(cuts), len(history), *cuts]:
            request = ModelRequest(provider.config, "S", context_items(history[:cut]), TOOLS)
            body = provider.build_body(request)
            assert history_of(body) == uncached(provider, request)
            assert body == type(provider)(provider.config).build_body(request)


# -- pair_tool_calls is written for speed; it must do what the plain version did ------------------


def reference_pairing(items: list[Item]) -> list[Item]:
    """The straightforward implementation `pair_tool_calls` replaced (same rules, slower)."""
    out: list[Item] = []
    calls: list[Item] = []
    results: dict[str, Item] = {}
    notes: list[Item] = []

    def flush() -> None:
        for c in calls:
            call_id = str(c.get("callId", ""))
            out.append(
                results.get(call_id)
                or {
                    "type": "tool_result",
                    "callId": call_id,
                    "name": c.get("name", ""),
                    "output": INTERRUPTED_RESULT,
                    "isError": True,
                    "status": "completed",
                }
            )
        out.extend(notes)
        calls.clear()
        results.clear()
        notes.clear()

    for i in items:
        kind = i.get("type")
        if kind == "tool_call":
            if results:
                flush()
            if not any(c.get("callId") == i.get("callId") for c in calls):
                calls.append(i)
                out.append(i)
        elif kind == "tool_result":
            call_id = str(i.get("callId", ""))
            if any(c.get("callId") == call_id for c in calls) and call_id not in results:
                results[call_id] = i
            else:
                note: Item = {
                    "type": "notice",
                    "text": f"Result of an earlier {i.get('name', 'tool')} call: "
                    + http.tool_output_text(i),
                }
                (notes if calls else out).append(note)
        elif kind in ("agent_message", "reasoning") and calls and not results:
            out.append(i)
        else:
            if calls:
                flush()
            out.append(i)
    if calls:
        flush()
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([*KINDS, "tool_call", "tool_result", "tool_call", "tool_result"]),
            st.sampled_from(["a", "b", "c", "1", 1, None, ["x"], "missing"]),
        ),
        max_size=20,
    )
)
def test_pairing_matches_the_reference(spec: list[tuple[str, Any]]) -> None:
    items: list[Item] = []
    for kind, call_id in spec:
        one: Item = {"type": kind, "name": "shell", "output": "o", "text": "t"}
        if kind == "tool_result" and not isinstance(call_id, str | None):
            call_id = str(call_id)
        if call_id != "missing":
            one["callId"] = call_id
        items.append(one)
    paired = pair_tool_calls(items)
    assert paired == reference_pairing(items)
    # Items pass through as the same objects (the wire caches rely on it).
    originals = {id(i) for i in items}
    reference_ids = [id(i) for i in reference_pairing(items) if id(i) in originals]
    assert [id(i) for i in paired if id(i) in originals] == reference_ids
