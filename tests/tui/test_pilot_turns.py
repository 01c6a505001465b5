"""A turn streams and a tool call shows its output, against a real daemon; a long streamed reply
is drawn as it grows, on a fake client streaming it."""

from __future__ import annotations

from typing import Any

from textual.geometry import Region
from textual.widgets import Collapsible

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import AgentMessage, Reasoning, ToolBlock, UserMessage
from openvaala_tui.widgets.markdown_render import RenderedMarkdown
from tests.tui.conftest import Clients, demo_config, ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD

AGENT_ON_FAKE = """
[agents.default]
description = "General assistant"
model = "fake"
"""


def types(app: VaalaApp) -> list[str]:
    return [str(w.item.get("type")) for w in app.transcript.item_widgets]


async def test_send_and_watch_a_turn_stream(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config(pace_ms=5))
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "think: about tests")
        root = app.view.root
        assert root is not None
        await wait_for(
            pilot,
            lambda: (
                types(app) == ["user_message", "reasoning", "agent_message"] and not root.running
            ),
            what="the turn to end",
        )
        assert app.transcript.query(UserMessage)
        reasoning = app.transcript.query_one(Reasoning)
        assert reasoning.query_one(Collapsible).collapsed
        message = app.transcript.query_one(AgentMessage)
        await wait_for(
            pilot,
            lambda: "offline demo model" in message.source,
            what="the markdown",
        )
        assert app.composer.is_empty
        assert app.view.title != "New conversation"


async def test_tool_call_shows_status_and_output(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config(pace_ms=0))
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "run: echo hello-tui")
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: bool(app.transcript.query(ToolBlock)), what="a tool block")
        await wait_for(pilot, lambda: not root.running, what="the turn to end")
        block = app.transcript.query_one(ToolBlock)
        await wait_for(pilot, lambda: block.status == "done", what="tool done")
        assert "echo hello-tui" in str(block.query_one(".tool-header").render())
        assert "hello-tui" in block._output()
        assert block.has_class("-done")


def shown(widget: AgentMessage) -> str:
    """The text the widget draws on screen now."""
    region = Region(0, 0, widget.size.width, widget.size.height)
    return "\n".join(strip.text.rstrip() for strip in widget.render_lines(region))


async def test_a_long_streamed_reply_is_drawn_as_it_grows_and_whole_at_the_end() -> None:
    # Long enough to be drawn block by block (`StreamedMarkdown`), with a fence holding blank
    # lines and a list, so a wrong cut would show. The reply as the daemon streams it
    # (item/started, item/delta, item/completed) on a fake client (tests/tui/fake_client.py);
    # how a provider's stream becomes those: tests/e2e/.
    sections = [
        f"## Part {n}\n\nSome text for part {n}, long enough to wrap at this width of the "
        f"terminal, and then some more.\n\n```python\ndef part_{n}():\n\n    return {n}\n```\n\n"
        f"- first point of part {n}\n- second point\n\n"
        for n in range(60)
    ]
    fake = FakeClient()
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        cid = app.view.conversation_id
        turn_id = fake.start_turn(cid, "write a long answer")
        reply = fake.start_item(cid, turn_id, "agent_message")
        for section in sections[:30]:
            fake.delta(cid, reply, section)
        await wait_for(pilot, lambda: bool(app.transcript.query(AgentMessage)), what="a reply")
        message = app.transcript.query_one(AgentMessage)
        await wait_for(pilot, lambda: "## Part 29" in message.source, what="the first half")
        await wait_for(pilot, lambda: "def part_29():" in shown(message), what="it on screen")
        assert "Part 30" not in shown(message)
        for section in sections[30:]:
            fake.delta(cid, reply, section)
        fake.add_item(cid, {**reply, "text": "".join(sections), "status": "completed"})
        fake.end_turn(cid, turn_id)
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: not root.running, what="the turn to end", timeout=20)
        await wait_for(
            pilot,
            lambda: (
                "Part 59" in (now := shown(message)) and "second point" in now.split("Part 59")[1]
            ),
            what="the end of the reply on screen",
        )
        # What was drawn piece by piece is what the whole reply draws at once.
        whole = RenderedMarkdown(message.source)
        options = app.console_options.update_width(message.content_region.width)
        expected = [
            "".join(segment.text for segment in line).rstrip()
            for line in whole.lines(app.console, options)
        ]
        drawn = [line.rstrip() for line in shown(message).splitlines()]
        assert drawn == expected
