"""Slash commands and live updates from another client, against a real daemon."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import pytest
from textual.widgets import Collapsible, Markdown, OptionList

from openvaala_tui.app import VaalaApp
from openvaala_tui.screens import AgentsScreen, ListPicker
from openvaala_tui.widgets import transcript as transcript_module
from openvaala_tui.widgets.items import AgentMessage, Summary, UserMessage
from openvaala_tui.widgets.transcript import FIRST_PAGE, Transcript
from tests.support.json import j
from tests.tui import fixed
from tests.tui.conftest import Clients, demo_config, notices, ready, type_and_send, wait_for


async def finished_turn(pilot: Any, app: VaalaApp, text: str) -> None:
    count = len(app.transcript.query(AgentMessage))
    await type_and_send(pilot, text)
    root = app.view.root
    assert root is not None
    await wait_for(
        pilot,
        lambda: len(app.transcript.query(AgentMessage)) > count and not root.running,
        what="the turn",
    )


async def test_second_client_message_appears_live(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    client = await clients(daemon)
    other = await clients(daemon, "other")
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await other.request(
            "input/send",
            {"conversationId": app.view.conversation_id, "text": "from elsewhere", "mode": "queue"},
        )
        await wait_for(
            pilot,
            lambda: any(
                w.item.get("text") == "from elsewhere" for w in app.transcript.query(UserMessage)
            ),
            what="the other client's message",
        )
        await wait_for(pilot, lambda: bool(app.transcript.query(AgentMessage)), what="reply")


async def test_context_model_and_agents(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await finished_turn(pilot, app, "hello")
        await type_and_send(pilot, "/context")
        await wait_for(pilot, lambda: any("Context:" in t for t in notices(app)), what="/context")
        report = next(t for t in notices(app) if "Context:" in t)
        assert "of 100,000 tokens" in report and "compaction at" in report

        await type_and_send(pilot, "/model")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="model picker")
        picker = app.screen
        assert isinstance(picker, ListPicker)
        assert [value for value, _ in picker.choices] == ["demo", "other"]
        await pilot.press("down", "enter")  # the current one ("demo") is highlighted
        await wait_for(
            pilot,
            lambda: app.view.root is not None and app.view.root.info.get("model") == "other",
            what="the model switch",
        )
        assert "other" in str(app.query_one("#status-model").render())

        await type_and_send(pilot, "/agents")
        await wait_for(pilot, lambda: isinstance(app.screen, AgentsScreen), what="agents")
        agents = app.screen
        assert isinstance(agents, AgentsScreen)
        assert [s["sessionId"] for s in agents.sessions] == [app.view.root_id]
        await pilot.press("f")
        await wait_for(pilot, lambda: not isinstance(app.screen, AgentsScreen))
        assert app.following == app.view.root_id


async def test_rename_and_resume(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await finished_turn(pilot, app, "hello")
        first = app.view.conversation_id
        await type_and_send(pilot, "/rename My title")
        await wait_for(pilot, lambda: app.view.title == "My title", what="the rename")
        await type_and_send(pilot, "/new")
        await wait_for(pilot, lambda: app.view.conversation_id not in ("", first), what="/new")
        assert not app.transcript.item_widgets
        await type_and_send(pilot, "/resume")
        await wait_for(
            pilot,
            lambda: (
                bool(app.screen.query("#resume-list"))
                and app.screen.query_one("#resume-list", OptionList).option_count > 0
            ),
            what="the conversation list",
        )
        await pilot.press("enter", "enter")  # the search field hands over to the list
        await wait_for(pilot, lambda: app.view.conversation_id == first, what="resume")
        assert app.view.title == "My title"
        assert app.transcript.query(AgentMessage)


async def test_fork(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await finished_turn(pilot, app, "hello")
        first = app.view.conversation_id
        await type_and_send(pilot, "/fork")
        await wait_for(pilot, lambda: app.view.conversation_id != first, what="/fork")
        # The copy is open, with the same history, and says where it came from.
        assert j(app.view.conversation)["forkedFrom"]["conversationId"] == first
        await wait_for(pilot, lambda: len(app.transcript.query(AgentMessage)) == 1)
        assert [w.item["text"] for w in app.transcript.query(UserMessage)] == ["hello"]
        # It goes on by itself: the original keeps its own history.
        await finished_turn(pilot, app, "only in the fork")
        original = await client.request("conversation/read", {"conversationId": first})
        assert "only in the fork" not in [i.get("text") for i in original["items"]]


async def test_escape_twice_rewinds(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await finished_turn(pilot, app, "first message")
        await finished_turn(pilot, app, "second message")
        first = app.view.conversation_id
        app.composer.clear()
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="rewind picker")
        picker = app.screen
        assert isinstance(picker, ListPicker)
        assert [label for _, label in picker.choices] == ["first message", "second message"]
        await pilot.press("enter")  # the last one is highlighted
        await wait_for(pilot, lambda: app.view.conversation_id != first, what="/rewind")
        # A new conversation up to just before that message, with it back in the composer.
        assert app.composer.text == "second message"
        assert j(app.view.conversation)["forkedFrom"]["kind"] == "rewind"
        assert [w.item["text"] for w in app.transcript.query(UserMessage)] == ["first message"]
        assert len(app.transcript.query(AgentMessage)) == 1
        # Sending it again continues the new conversation.
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (
                [w.item["text"] for w in app.transcript.query(UserMessage)]
                == ["first message", "second message"]
            ),
            what="the message sent again",
        )
        assert app.view.conversation_id != first


async def test_compact(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await finished_turn(pilot, app, "hello")
        await finished_turn(pilot, app, "how are you")
        root = app.view.root
        assert root is not None

        # Refused while a turn runs, with a friendly explanation. The turn is long so /compact
        # surely lands while it runs, then Esc ends it so the test does not wait for it.
        await type_and_send(pilot, "run: sleep 30")
        await wait_for(pilot, lambda: root.running, what="the turn")
        await type_and_send(pilot, "/compact")
        await wait_for(
            pilot, lambda: any(t.startswith("Not now") for t in notices(app)), what="not_idle"
        )
        assert root.running
        assert not any(i.get("type") == "summary" for i in root.items)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not root.running, timeout=15, what="the turn to end")

        await type_and_send(pilot, "/compact")
        await wait_for(pilot, lambda: bool(app.transcript.query(Summary)), what="/compact")
        marker = app.transcript.query_one(Summary)
        assert marker.item["reason"] == "manual"
        assert not root.compacting
        collapsible = marker.query_one(Collapsible)
        assert collapsible.collapsed
        assert "compacted by hand" in str(collapsible.title)
        # The summary itself is there to read, one click away.
        collapsible.collapsed = False
        await pilot.pause()
        text = marker.query_one(Markdown).source
        assert text and text == marker.item["text"]


async def test_scroll_to_top_pages_in_older_items(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    client = await clients(daemon)
    cid = (await client.request("conversation/create", {"cwd": str(daemon.workdir)}))[
        "conversation"
    ]["conversationId"]
    await client.subscribe(cid)
    for n in range(55):  # 55 turns = 110 items: several pages of FIRST_PAGE
        await client.request(
            "input/send", {"conversationId": cid, "text": f"m{n}", "mode": "queue"}
        )
        while (await client.next_notification())["method"] != "turn/ended":
            pass
    await client.unsubscribe(cid)
    app = VaalaApp(cwd=str(daemon.workdir), client=client, conversation_id=cid)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        transcript = app.query_one(Transcript)
        await wait_for(pilot, lambda: len(transcript.item_widgets) == FIRST_PAGE, what="first page")
        assert transcript.more_above
        await wait_for(pilot, lambda: transcript.max_scroll_y > 0, what="the layout")
        # The user scrolls to the top: the earlier items page in above, and what was at the
        # top of the screen stays there (no jump to the oldest message).
        top = transcript.item_widgets[0]
        # The first page is mounted in chunks: let its layout settle before measuring.
        settled: list[int] = []
        while len(settled) < 3 or len(set(settled[-3:])) > 1:
            await pilot.pause(0.05)
            settled.append(top.virtual_region.y)
        transcript.scroll_home(animate=False, immediate=True)
        # Where the top item is on screen until the older page arrives: what must be kept.
        offset = top.virtual_region.y - transcript.scroll_y
        deadline = time.monotonic() + 10
        while len(transcript.item_widgets) == FIRST_PAGE and time.monotonic() < deadline:
            offset = top.virtual_region.y - transcript.scroll_y
            await pilot.pause(0.01)
        await wait_for(
            pilot, lambda: len(transcript.item_widgets) == 2 * FIRST_PAGE, what="older page"
        )
        # The scroll position is restored once the new page is laid out (a frame later when busy).
        await wait_for(
            pilot,
            lambda: (
                transcript.scroll_y > 0 and top.virtual_region.y - transcript.scroll_y == offset
            ),
            what="the view kept in place",
        )
        # Scrolling to the top again and again pages in the rest, down to the first message.
        while transcript.more_above:
            count = len(transcript.item_widgets)
            transcript.scroll_home(animate=False, immediate=True)
            await wait_for(pilot, partial(_more_than, transcript, count), what="older page")
            await pilot.pause()
        assert len(transcript.item_widgets) == 110
        assert transcript.item_widgets[0].item.get("text") == "m0"
        top = transcript.item_widgets[0]
        settled = []
        while len(settled) < 3 or len(set(settled[-3:])) > 1:
            await pilot.pause(0.05)
            settled.append(top.virtual_region.y - transcript.scroll_y)
        offset = settled[-1]
        # Live items still arrive at the bottom while the user reads further up.
        await client.subscribe(cid)
        await client.request("input/send", {"conversationId": cid, "text": "late", "mode": "queue"})
        await wait_for(
            pilot,
            lambda: (
                transcript.item_widgets[-1].item.get("type") == "agent_message"
                and len(transcript.item_widgets) == 112
            ),
            what="the new turn",
        )
        await wait_for(  # still no jump, once the new items are laid out
            pilot,
            lambda: top.virtual_region.y - transcript.scroll_y == offset,
            what="the view kept in place",
        )


async def test_a_long_page_shows_its_last_screen_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The items that fill the screen are mounted first, the rest of the page just after,
    above them: the view stays at the bottom and the page ends up whole, in order."""
    snapshot = fixed.snapshot()
    root = snapshot["sessions"][0]
    long_text = "\n\n".join(f"Paragraph {p} of a long answer." for p in range(12))
    root["items"] = [
        fixed._item(100 + n, "agent_message", text=f"# Answer {n}\n\n{long_text}")
        for n in range(FIRST_PAGE + 5)
    ]
    root["turn"] = None
    monkeypatch.setattr(transcript_module, "REST_DELAY_S", 0.5)  # time to look in between
    app = VaalaApp(cwd="/home/user/project", snapshot=snapshot)
    async with app.run_test(size=(100, 40)) as pilot:
        transcript = app.query_one(Transcript)
        await pilot.pause()
        first = len(transcript.item_widgets)
        await wait_for(
            pilot, lambda: len(transcript.item_widgets) == FIRST_PAGE, what="the rest of the page"
        )
        await pilot.pause()
        assert first < FIRST_PAGE  # the screenful came first
        texts = [str(w.item.get("text")) for w in transcript.item_widgets]
        assert [t.split("\n")[0] for t in texts] == [
            f"# Answer {n}" for n in range(5, FIRST_PAGE + 5)
        ]
        assert transcript.scroll_y == transcript.max_scroll_y > 0  # still at the bottom
        assert transcript.more_above


def _more_than(transcript: Transcript, count: int) -> bool:
    return len(transcript.item_widgets) > count
