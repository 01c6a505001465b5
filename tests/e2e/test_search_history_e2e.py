"""`search_history` through the daemon with a scripted provider: it finds a fact that only appeared
in a tool's output, gone from the model's context after a compaction, and never answers with the
asking turn's own message (docs/design.md, "What search_history finds")."""

from __future__ import annotations

from typing import Any

from tests.e2e.test_context_steering_e2e import _items, _setup
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.events import run_turn


def _result(notes: list[dict[str, Any]]) -> dict[str, Any]:
    return next(
        n["params"]["item"]
        for n in notes
        if n["method"] == "item/completed" and n["params"]["item"]["type"] == "tool_result"
    )


async def test_search_history_finds_tool_output_and_not_its_own_question(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d, client, cid = await _setup(
        daemon_factory, fake_openai, tools='["read_file", "search_history"]', window=100_000
    )
    # The fact sits past the first 2,000 characters of a long output: its end is kept too.
    (d.workdir / "server.log").write_text("boot ok\n" * 1000 + "listening on staging port 48213\n")
    fake_openai.enqueue(
        Reply().tool_call("read_file", {"path": "server.log"}),
        Reply().text("read it"),
        Reply().text("SUMMARY"),
        Reply().tool_call("search_history", {"query": "staging port"}),
        Reply().text("found it"),
    )
    await run_turn(client, cid, "read the server log")
    assert (await client.request("conversation/compact", {"conversationId": cid}))["compacted"]
    items = await _items(client, cid)
    output = next(i for i in items if i["type"] == "tool_result")
    assert "48213" in output["output"]
    context = await client.request("conversation/context", {"conversationId": cid})
    assert output["itemId"] not in [i for p in context["parts"] for i in p.get("itemIds", [])]

    notes = await run_turn(client, cid, "which staging port did the server use?")
    result = _result(notes)
    assert not result["isError"], result
    assert "48213" in result["output"] and output["itemId"] in result["output"]
    assert "output of read_file" in result["output"]
    assert "not in your context" in result["output"]
    # The question itself matches both words, and is never an answer.
    assert "which staging port" not in result["output"]
    assert result["output"].count("[item ") == 1
    # The list's search stays on titles and messages: a tool's output does not find it.
    assert (await client.request("conversation/list", {"search": "48213"}))["conversations"] == []
    listed = await client.request("conversation/list", {"search": "server log"})
    assert [c["conversationId"] for c in listed["conversations"]] == [cid]
    await client.close()
