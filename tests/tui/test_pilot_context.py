"""Context in the TUI against a real daemon (docs/protocol.md "Context"): /context shows the trace
of the next request and the gauge, /pin pins a message, an expanded summary lists what it replaced
and jumps to it."""

from __future__ import annotations

import json
from typing import Any

from textual.widgets import Button, Collapsible

from openvaala_tui.app import VaalaApp
from openvaala_tui.screens import ListPicker
from openvaala_tui.widgets.items import AgentMessage, Summary
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.tui.conftest import Clients, demo_config, notices, ready, type_and_send, wait_for


async def _turn(pilot: Any, app: VaalaApp, text: str) -> None:
    count = len(app.transcript.query(AgentMessage))
    await type_and_send(pilot, text)
    root = app.view.root
    assert root is not None
    await wait_for(
        pilot,
        lambda: len(app.transcript.query(AgentMessage)) > count and not root.running,
        what="the turn",
    )


async def test_trace_gauge_pin_and_what_a_summary_replaced(
    daemon_factory: Any, clients: Clients
) -> None:
    daemon = daemon_factory(demo_config() + "refresh_every = 5\n")
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(110, 44)) as pilot:
        await ready(pilot)
        await _turn(pilot, app, "hello")
        await _turn(pilot, app, "how are you")
        # The gauge: the meter counts down the replies before the refresh summary.
        meter = str(app.query_one("#status-meter").render())
        assert "↻3" in meter

        # /pin offers the messages; the chosen one is pinned for every client.
        await type_and_send(pilot, "/pin")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="pin picker")
        picker = app.screen
        assert isinstance(picker, ListPicker)
        first = next(value for value, label in picker.choices if "hello" in label)
        picker.dismiss(first)
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: root.pinned == [first], what="pins/updated")

        await type_and_send(pilot, "/compact")
        await wait_for(pilot, lambda: bool(app.transcript.query(Summary)), what="/compact")

        # /context: the parts of the next request, their tokens and what was left out.
        await type_and_send(pilot, "/context")
        await wait_for(
            pilot, lambda: any("Next request" in t for t in notices(app)), what="/context"
        )
        report = next(t for t in notices(app) if "Next request" in t)
        trace = await client.request(
            "conversation/context", {"conversationId": app.view.conversation_id}
        )
        assert f"Next request, about {trace['total']:,} tokens" in report
        for part in trace["parts"]:
            assert f"{part['tokens']:,}" in report
        assert "Summary" in report and "Pinned (1)" in report
        assert "replaced by the summary" in report

        # Expanding the summary lists what it replaced; the button jumps there.
        marker = app.transcript.query_one(Summary)
        marker.query_one(Collapsible).collapsed = False
        await wait_for(pilot, lambda: bool(marker.query(".replaced")), what="the replaced list")
        replaced: Any = await client.request(
            "conversation/replaced",
            {"conversationId": app.view.conversation_id, "summaryItemId": marker.item_id},
        )
        listing = str(marker.query_one(".replaced").render())
        assert f"It replaced {len(replaced['items'])} items" in listing
        assert "how are you" in listing
        app.transcript.scroll_end(animate=False)
        await pilot.pause()
        button = marker.query_one(".replaced-jump", Button)
        assert button.name == replaced["fromItemId"]
        assert await app.jump_to(replaced["fromItemId"])
        target = next(w for w in app.transcript.item_widgets if w.item_id == replaced["fromItemId"])
        assert target.has_class("-jumped")


async def test_context_json_copies_the_provider_body(
    fake_openai: FakeProvider, daemon_factory: Any, clients: Clients
) -> None:
    config = (
        fake_openai.config_toml("fake", context_window=100_000, max_output_tokens=1000)
        + '\n[agents.default]\ndescription = "d"\nmodel = "fake"\ntools = ["read_file"]\n'
    )
    fake_openai.enqueue(Reply().text("an answer"), Reply().text("next"))
    daemon = daemon_factory(config)
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(110, 44)) as pilot:
        await ready(pilot)
        await _turn(pilot, app, "hello")
        await type_and_send(pilot, "/context json")
        await wait_for(pilot, lambda: bool(app.clipboard), what="the copied body")
        body = json.loads(app.clipboard)
        assert body["model"] == "fake-model"
        assert [m["content"] for m in body["messages"][1:]] == ["hello", "an answer"]
        # It is what the provider is sent next, before the new message.
        await _turn(pilot, app, "again")
        sent = fake_openai.requests[-1].json
        assert sent["messages"][:-1] == body["messages"]
        assert sent["tools"] == body["tools"]
