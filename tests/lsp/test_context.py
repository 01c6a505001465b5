"""Context through the editor bridge (pytest-lsp, each editor's recorded capabilities): the trace
of the next request and its body, the gauge in `$/openvaala/usage`, pins, and what a summary
replaced with a jump to it in the conversation's document (docs/editors.md)."""

from __future__ import annotations

from typing import Any

from tests.lsp.harness import Recorder, capabilities, command, request, start_lsp, stop_lsp
from tests.support.daemon import DEFAULT_CONFIG


async def _turn(client: Any, rec: Recorder, cid: str, text: str) -> None:
    before = rec.methods(cid).count("turn/ended")
    await command(client, "openvaala.send", cid, text)
    await rec.until(lambda: rec.methods(cid).count("turn/ended") > before)


async def test_trace_gauge_pins_and_replaced(editor: str, daemon_factory: Any) -> None:
    daemon = daemon_factory(DEFAULT_CONFIG + "refresh_every = 5\n")
    client, rec, _ = await start_lsp(daemon, capabilities(editor))
    try:
        new = await command(client, "openvaala.newConversation")
        cid = new["conversation"]["conversationId"]
        await request(client, "openvaala/subscribe", {"conversationId": cid})
        await _turn(client, rec, cid, "first question")
        await _turn(client, rec, cid, "second question")
        # The gauge: the status line's usage counts down the replies before a refresh.
        await rec.until(lambda: any(u.get("repliesUntilRefresh") == 3 for u in rec.usage))
        gauge = next(u for u in rec.usage if u.get("repliesUntilRefresh") == 3)
        assert gauge["text"].endswith(" · refresh in 3") and "thresholdPercent" in gauge

        snapshot = await request(client, "openvaala/subscribe", {"conversationId": cid})
        items = snapshot["snapshot"]["sessions"][0]["items"]
        first = next(i for i in items if i.get("text") == "first question")
        pinned = await command(client, "openvaala.pin", cid, first["itemId"])
        assert pinned["pinned"] == [first["itemId"]]
        assert (await command(client, "openvaala.compact", cid))["compacted"] is True

        # The trace: parts that add up, their lines, and the gauge with them.
        trace = await request(client, "openvaala/context", {"conversationId": cid})
        assert trace["total"] == sum(p["tokens"] for p in trace["parts"])
        kinds = [p["kind"] for p in trace["parts"]]
        assert kinds[:4] == ["base", "environment", "summary", "pinned"]
        assert trace["lines"][0] == f"Next request: about {trace['total']:,} tokens"
        assert any(line.startswith("Left out: ") for line in trace["lines"])
        assert trace["gauge"]["used"] == trace["usage"]["used"]
        as_command = await command(client, "openvaala.context", cid)
        assert as_command["total"] == trace["total"]
        copied = await command(client, "openvaala.contextJson", cid)
        assert copied == {"body": None, "json": ""}  # the demo provider has no HTTP body

        # What the summary replaced, and where the document shows it.
        await rec.until(lambda: "compaction/completed" in rec.methods(cid))
        read = await request(client, "openvaala/subscribe", {"conversationId": cid})
        summary = next(
            i for i in read["snapshot"]["sessions"][0]["items"] if i["type"] == "summary"
        )
        shown_before = len(client.shown_documents)
        result = await command(client, "openvaala.replaced", cid, summary["itemId"])
        texts = [i.get("text") for i in result["items"]]
        assert "second question" in texts and "first question" not in texts  # pinned: kept
        assert result["location"]["uri"] == f"openvaala://conversation/{cid}"
        document = await request(client, "openvaala/render", {"uri": result["location"]["uri"]})
        at = result["location"]["line"]
        shown = document["text"].split("\n")[at : at + 4]
        assert shown[0] == "## You" and any("second question" in line for line in shown)
        if editor == "visual-studio-code" or len(client.shown_documents) > shown_before:
            shown_doc = client.shown_documents[-1]
            assert shown_doc.uri == result["location"]["uri"]
            assert shown_doc.selection is not None and shown_doc.selection.start.line == at
        unpinned = await command(client, "openvaala.unpin", cid, first["itemId"])
        assert unpinned["pinned"] == []
    finally:
        await stop_lsp(client)
