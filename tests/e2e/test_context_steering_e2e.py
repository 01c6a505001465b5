"""Context a user can see and steer, through the daemon with a scripted provider: the trace of the
next request, pins, what a summary replaced, early compaction, compact_threshold = 0, refresh_every
and search_history (docs/protocol.md "Context")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openvaala_server.client import Client, RpcError
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.events import collect_until, new_conversation, run_turn, snapshot_of

BIG = "x" * 2000  # about 500 tokens


def _config(
    fake: FakeProvider, agent: str = "", tools: str = "[]", window: int = 1000, max_out: int = 100
) -> str:
    return (
        fake.config_toml("fake", context_window=window, max_output_tokens=max_out)
        + '\n[agents.default]\ndescription = "test agent"\nmodel = "fake"\n'
        + f'instructions = "Be brief."\ntools = {tools}\n'
        + "base_instructions = false\n"  # a window this small is the base prompt's alone
        + agent
        + "\n[retry]\nbase_delay_s = 0.01\nmax_delay_s = 0.05\nmax_retries = 1\n"
    )


async def _setup(daemon_factory: Any, fake: FakeProvider, **kw: Any) -> tuple[Daemon, Client, str]:
    d: Daemon = daemon_factory(config=_config(fake, **kw))
    (d.workdir / "AGENTS.md").write_text("Always run the tests.")
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    return d, client, cid


def _texts(request: Any) -> list[str]:
    return [str(m.get("content")) for m in request.json["messages"] if m["role"] != "system"]


async def _items(client: Client, cid: str) -> list[dict[str, Any]]:
    read = await client.request("conversation/read", {"conversationId": cid, "limit": 1000})
    items: list[Any] = read["items"]
    return items


async def test_the_trace_sums_to_the_usage_estimate_and_is_the_body_the_provider_gets(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _setup(
        daemon_factory, fake_openai, tools='["read_file", "search_history"]', window=100_000
    )
    fake_openai.enqueue(
        Reply().text("one").usage(300, 20),
        Reply().text("two").usage(400, 20),
        Reply().text("SUMMARY"),
        Reply().text("three"),
    )
    await run_turn(client, cid, "hello")
    await run_turn(client, cid, "again")
    done = await client.request("conversation/compact", {"conversationId": cid})
    assert done["compacted"]
    trace: Any = await client.request(
        "conversation/context", {"conversationId": cid, "includeBody": True}
    )
    parts = trace["parts"]
    kinds = [p["kind"] for p in parts]
    assert kinds == ["system", "environment", "agents_md", "summary", "history", "tools"]
    assert trace["total"] == sum(p["tokens"] for p in parts)
    usage = await client.request("conversation/usage", {"conversationId": cid})
    assert usage["source"] == "estimated" and usage["used"] == trace["total"]
    assert trace["usage"]["used"] == trace["total"]
    assert "read_file" in parts[-1]["label"] and "search_history" in parts[-1]["label"]
    # What the summary replaced is listed as left out, with the reason.
    items = await _items(client, cid)
    summary = next(i for i in items if i["type"] == "summary")
    assert parts[3]["itemIds"] == [summary["itemId"]]
    omitted = {o["reason"]: o["itemIds"] for o in trace["omitted"]}
    assert omitted["replaced by the summary"] == [i["itemId"] for i in items[:3]]
    # The next request is the body shown, plus the message that starts the turn.
    await run_turn(client, cid, "next")
    sent = fake_openai.requests[-1].json
    body = trace["body"]
    assert {k: v for k, v in sent.items() if k != "messages"} == {
        k: v for k, v in body.items() if k != "messages"
    }
    assert sent["messages"][:-1] == body["messages"]
    assert sent["messages"][-1] == {"role": "user", "content": "next"}
    assert "Always run the tests." in body["messages"][0]["content"]
    await client.close()


async def test_a_pinned_message_survives_two_compactions_verbatim_restart_and_fork(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d, client, cid = await _setup(daemon_factory, fake_openai)
    fake_openai.enqueue(
        Reply().text("first answer").usage(300, 20),
        Reply().text("SUMMARY-ONE"),
        Reply().text("second answer").usage(400, 20),
        Reply().text("SUMMARY-TWO"),
        Reply().text("third answer").usage(400, 20),
    )
    pin_text = "PINNED: the deploy key lives in vault/prod"
    notes = await run_turn(client, cid, pin_text)
    message = next(
        n["params"]["item"]
        for n in notes
        if n["method"] == "item/completed" and n["params"]["item"]["type"] == "user_message"
    )
    pinned = await client.request(
        "conversation/pin", {"conversationId": cid, "itemId": message["itemId"]}
    )
    assert pinned == {"pinned": [message["itemId"]], "changed": True}
    await run_turn(client, cid, BIG)
    await run_turn(client, cid, BIG + "y")
    requests = fake_openai.requests
    first_summary, first_main = requests[1], requests[2]
    second_summary, second_main = requests[3], requests[4]
    assert "SUMMARY-ONE" in _texts(first_main)[0] and _texts(first_main)[1] == pin_text
    assert "SUMMARY-TWO" in _texts(second_main)[0] and _texts(second_main)[1] == pin_text
    # Never summarized: the compact model is not given it.
    assert pin_text not in str(_texts(first_summary)) + str(_texts(second_summary))
    trace: Any = await client.request("conversation/context", {"conversationId": cid})
    pinned_part = next(p for p in trace["parts"] if p["kind"] == "pinned")
    assert pinned_part["itemIds"] == [message["itemId"]]
    # Recorded in the journal: a restart keeps it, and a fork keeps it too.
    await client.close()
    d.restart()
    client = await d.client()
    snapshot = await snapshot_of(client, cid)
    assert snapshot["sessions"][0]["pinned"] == [message["itemId"]]
    forked = await client.request("conversation/fork", {"conversationId": cid})
    fid = forked["conversation"]["conversationId"]
    fork_trace = await client.request("conversation/context", {"conversationId": fid})
    assert [p["itemIds"] for p in fork_trace["parts"] if p["kind"] == "pinned"] == [
        [message["itemId"]]
    ]
    full = await _items(client, fid)
    assert [i["itemId"] for i in full].count(message["itemId"]) == 1
    # Unpinned: the next compaction may summarize it.
    gone = await client.request(
        "conversation/unpin", {"conversationId": cid, "itemId": message["itemId"]}
    )
    assert gone == {"pinned": [], "changed": True}
    await client.close()


async def test_a_pin_that_would_not_fit_is_refused_with_the_reason(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _setup(daemon_factory, fake_openai)
    fake_openai.enqueue(Reply().text("ok"), Reply().text("ok"))
    notes = await run_turn(client, cid, BIG + BIG)
    big = next(
        n["params"]["item"]
        for n in notes
        if n["method"] == "item/completed" and n["params"]["item"]["type"] == "user_message"
    )
    with pytest.raises(RpcError) as refused:
        await client.request("conversation/pin", {"conversationId": cid, "itemId": big["itemId"]})
    assert refused.value.kind == "pin_refused"
    assert "would not fit" in refused.value.message
    assert error_data(refused.value)["tokens"] > error_data(refused.value)["budget"]
    # A tool result or a made-up id is refused too, naming the problem.
    with pytest.raises(RpcError) as missing:
        await client.request("conversation/pin", {"conversationId": cid, "itemId": "f" * 32})
    assert missing.value.kind == "not_found"
    snapshot = await snapshot_of(client, cid)
    assert snapshot["sessions"][0]["pinned"] == []
    await client.close()


async def test_expanding_a_summary_lists_exactly_the_items_it_replaced(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _setup(daemon_factory, fake_openai)
    fake_openai.enqueue(
        Reply().text("first answer").usage(300, 20),
        Reply().text("SUMMARY-ONE"),
        Reply().text("second answer").usage(400, 20),
        Reply().text("SUMMARY-TWO"),
        Reply().text("third answer").usage(400, 20),
    )
    await run_turn(client, cid, "hello")
    await run_turn(client, cid, BIG)
    await run_turn(client, cid, BIG + "y")
    items = await _items(client, cid)
    ids = [i["itemId"] for i in items]
    one, two = [i for i in items if i["type"] == "summary"]
    # The first replaced everything before the message that triggered it.
    first = await client.request(
        "conversation/replaced", {"conversationId": cid, "summaryItemId": one["itemId"]}
    )
    assert first["itemIds"] == ids[:2] and first["replacesSummary"] is None
    assert [i["text"] for i in first["items"]] == ["hello", "first answer"]
    # The second: what came after the first's range up to its own end, and the first summary.
    second = await client.request(
        "conversation/replaced", {"conversationId": cid, "summaryItemId": two["itemId"]}
    )
    start = ids.index(one["coversUpTo"]) + 1
    end = ids.index(two["coversUpTo"])
    expected = [i for i in ids[start : end + 1] if i != one["itemId"]]
    assert second["itemIds"] == expected and second["replacesSummary"] == one["itemId"]
    assert second["fromItemId"] == expected[0] and second["toItemId"] == two["coversUpTo"]
    with pytest.raises(RpcError) as bad:
        await client.request(
            "conversation/replaced", {"conversationId": cid, "summaryItemId": ids[0]}
        )
    assert bad.value.kind == "not_found"
    await client.close()


def _early_ready(note: dict[str, Any]) -> bool:
    early = note["params"].get("usage", {}).get("earlyCompaction", {})
    return bool(note["method"] == "usage/updated" and early.get("state") == "ready")


async def test_early_compaction_runs_while_idle_and_the_next_turn_needs_no_compaction_call(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    # Usable window 1900: early compaction from 570 tokens, the threshold at 1600.
    _d, client, cid = await _setup(
        daemon_factory, fake_openai, agent="early_compaction = 0.3\n", window=2000
    )
    big = ["a" * 2000, "b" * 2000, "c" * 2000]
    fake_openai.enqueue(
        Reply().text("first answer").usage(520, 10),
        Reply().text("second answer").usage(1030, 10),
        Reply().text("EARLY ONE").usage(50, 7),  # prepared in the background
        Reply().text("third answer").usage(1590, 10),
        Reply().text("EARLY TWO").usage(60, 8),  # extended: it had gone stale
        Reply().text("fourth answer").usage(600, 10),
    )
    await run_turn(client, cid, big[0])
    assert len(fake_openai.requests) == 1  # 530 used: below early_compaction
    await run_turn(client, cid, big[1])
    await collect_until(client, _early_ready)  # idle at 1040: prepared in the background
    assert len(fake_openai.requests) == 3
    prepare = _texts(fake_openai.requests[2])
    assert "working memory" in str(fake_openai.requests[2].json["messages"][0]["content"])
    assert prepare[:2] == [big[0], "first answer"]
    usage = await client.request("conversation/usage", {"conversationId": cid})
    assert usage["compaction"] == {"calls": 1, "inputTokens": 50, "outputTokens": 7}
    # Another turn below the threshold makes it stale: it is extended, not redone.
    notes = await run_turn(client, cid, big[2])
    assert not any(n["method"].startswith("compaction/") for n in notes)
    await collect_until(client, _early_ready)
    extend = _texts(fake_openai.requests[4])
    assert "EARLY ONE" in extend[0] and extend[1:3] == [big[1], "second answer"]
    assert big[0] not in extend
    # Reaching the threshold now costs no model call: the prepared summary is used.
    notes = await run_turn(client, cid, "go on")
    assert len(fake_openai.requests) == 6
    methods = [n["method"] for n in notes]
    assert methods.index("compaction/started") < methods.index("compaction/completed")
    main = _texts(fake_openai.requests[5])
    assert "EARLY TWO" in main[0] and main[1:] == [big[2], "third answer", "go on"]
    items = await _items(client, cid)
    summary = next(i for i in items if i["type"] == "summary")
    assert summary["early"] is True and summary["replacesFrom"] == items[0]["itemId"]
    assert summary["coversUpTo"] == items[3]["itemId"]
    usage = await client.request("conversation/usage", {"conversationId": cid})
    assert usage["compaction"] == {"calls": 2, "inputTokens": 110, "outputTokens": 15}
    await client.close()


async def test_compact_threshold_zero_never_compacts(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _setup(daemon_factory, fake_openai, agent="compact_threshold = 0\n")
    fake_openai.enqueue(
        Reply().text("first answer").usage(300, 20),
        Reply().text("second answer").usage(850, 20),
        Reply().text("third answer").usage(880, 20),
    )
    await run_turn(client, cid, "hello")
    await run_turn(client, cid, BIG)
    notes = await run_turn(client, cid, BIG + "y")
    assert not any(n["method"].startswith("compaction/") for n in notes)
    assert len(fake_openai.requests) == 3
    assert all("working memory" not in str(r.json) for r in fake_openai.requests)
    usage = await client.request("conversation/usage", {"conversationId": cid})
    assert usage["autoCompact"] is False and usage["threshold"] == 0
    await client.close()


async def test_refresh_every_counts_replies_and_summarizes_when_due(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _setup(
        daemon_factory, fake_openai, agent="refresh_every = 2\n", window=100_000
    )
    fake_openai.enqueue(
        Reply().text("one"), Reply().text("two"), Reply().text("REFRESH"), Reply().text("three")
    )
    usage = await client.request("conversation/usage", {"conversationId": cid})
    assert usage["refreshEvery"] == 2 and usage["repliesUntilRefresh"] == 2
    await run_turn(client, cid, "a")
    usage = await client.request("conversation/usage", {"conversationId": cid})
    assert usage["repliesUntilRefresh"] == 1
    await run_turn(client, cid, "b")
    usage = await client.request("conversation/usage", {"conversationId": cid})
    assert usage["repliesUntilRefresh"] == 0
    notes = await run_turn(client, cid, "c")
    started = [n["params"] for n in notes if n["method"] == "compaction/started"]
    assert [s["reason"] for s in started] == ["refresh"]
    assert "REFRESH" in _texts(fake_openai.requests[-1])[0]
    assert _texts(fake_openai.requests[-1])[-1] == "c"
    usage = await client.request("conversation/usage", {"conversationId": cid})
    assert usage["repliesUntilRefresh"] == 1
    await client.close()


async def test_search_history_finds_what_only_exists_before_the_last_summary(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _setup(daemon_factory, fake_openai, tools='["search_history"]')
    fake_openai.enqueue(
        Reply().text("noted").usage(300, 20),
        Reply().text("SUMMARY"),
        Reply().text("ok").usage(400, 20),
        Reply().tool_call("search_history", {"query": "zebra password"}).usage(500, 20),
        Reply().text("found it").usage(500, 20),
    )
    await run_turn(client, cid, "the zebra password is hunter2")
    await run_turn(client, cid, BIG)
    # The summary prompt tells the compact model the tool exists.
    assert "search_history" in str(fake_openai.requests[1].json["messages"][0]["content"])
    items = await _items(client, cid)
    old = items[0]
    assert old["text"] == "the zebra password is hunter2"
    assert old["itemId"] not in [
        i
        for p in (await client.request("conversation/context", {"conversationId": cid}))["parts"]
        for i in p.get("itemIds", [])
    ]
    notes = await run_turn(client, cid, "what was the zebra password?")
    result = next(
        n["params"]["item"]
        for n in notes
        if n["method"] == "item/completed" and n["params"]["item"]["type"] == "tool_result"
    )
    assert not result["isError"]
    assert "hunter2" in result["output"] and old["itemId"] in result["output"]
    assert "item 1 of" in result["output"] and "not in your context" in result["output"]
    # Only the old message matched: the question itself is never an answer, the summary is no
    # message.
    assert result["output"].count("[item ") == 1
    await asyncio.sleep(0)
    await client.close()
