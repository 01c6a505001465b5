"""Slash commands and live updates from another client, against a real daemon. (/context,
/model, /agents, /fork, /rename, /resume and /compact need none:
test_commands_fake_client.py.)"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import pytest

from openvaala_tui.app import VaalaApp
from openvaala_tui.screens import ListPicker
from openvaala_tui.widgets import transcript as transcript_module
from openvaala_tui.widgets.items import AgentMessage, UserMessage
from openvaala_tui.widgets.transcript import FIRST_PAGE, Transcript
from tests.support.json import j
from tests.tui import fixed
from tests.tui.conftest import Clients, demo_config, ready, type_and_send, wait_for


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
