"""Early compaction stops after a compaction that left the context above `early_compaction`
(docs/configuration.md, "Compaction"): it starts again only once the context has gone the same
share of the way from there to the threshold, counted by the summary calls the fake provider
gets."""

from __future__ import annotations

from typing import Any

from tests.e2e.test_context_steering_e2e import _early_ready, _setup
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.events import collect_until, run_turn


def _summary_calls(fake: FakeProvider) -> int:
    return sum("working memory" in str(r.json["messages"][0]["content"]) for r in fake.requests)


async def test_no_summary_at_every_idle_moment_after_a_compaction(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    # Usable window 1900: early compaction from 950 tokens, the threshold at 1600.
    _d, client, cid = await _setup(
        daemon_factory, fake_openai, agent="early_compaction = 0.5\n", window=2000
    )
    fake_openai.enqueue(
        Reply().text("first answer").usage(520, 10),
        Reply().text("second answer").usage(1030, 10),
        Reply().text("EARLY ONE").usage(50, 7),  # prepared while idle at 1040
        Reply().text("third answer").usage(1590, 10),
        Reply().text("EARLY TWO").usage(60, 8),  # extended while idle at 1600
        # The prepared summary is saved before this call: 610 used after it.
        Reply().text("fourth answer").usage(600, 10),
        Reply().text("fifth answer").usage(1060, 10),
        Reply().text("sixth answer").usage(1300, 10),
        Reply().text("EARLY THREE").usage(70, 9),
    )
    await run_turn(client, cid, "a" * 2000)
    await run_turn(client, cid, "b" * 2000)
    await collect_until(client, _early_ready)
    await run_turn(client, cid, "c" * 2000)
    await collect_until(client, _early_ready)
    notes = await run_turn(client, cid, "go on")
    assert any(n["method"] == "compaction/completed" for n in notes)
    assert _summary_calls(fake_openai) == 2

    # Right after the compaction the start moved up: 610 + (1600 - 610) * 950 / 1600 ≈ 1200.
    usage = await client.request("conversation/usage", {"conversationId": cid})
    assert usage["used"] == 610 and usage["earlyCompaction"]["state"] == "idle"
    start = usage["earlyCompaction"]["threshold"]
    assert 1150 < start < 1250, start
    # Idle at 1070, above 950 with more than the kept 20% new since the summary: before, this
    # idle moment (and every one after it) cost a summary call.
    await run_turn(client, cid, "d" * 1800)
    usage = await client.request("conversation/usage", {"conversationId": cid})
    assert usage["used"] == 1070 and usage["earlyCompaction"]["state"] == "idle"
    assert _summary_calls(fake_openai) == 2 and usage["compaction"]["calls"] == 2

    # Past the moved start, the next compaction is prepared early again.
    await run_turn(client, cid, "e" * 1000)
    await collect_until(client, _early_ready)
    assert _summary_calls(fake_openai) == 3
    await client.close()
