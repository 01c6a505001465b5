"""Live updates from another client, against a real daemon; paging in older items. (/context,
/model, /agents, /fork, /rename, /resume, /compact and the rewind need none:
test_commands_fake_client.py.)"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import pytest

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets import transcript as transcript_module
from openvaala_tui.widgets.items import AgentMessage, UserMessage
from openvaala_tui.widgets.transcript import FIRST_PAGE, Transcript
from tests.tui import fixed
from tests.tui.conftest import Clients, demo_config, ready, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD


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


async def test_scroll_to_top_pages_in_older_items() -> None:
    # A stored conversation of 55 turns = 110 items (several pages of FIRST_PAGE), on a fake
    # client answering `conversation/read` page by page as the daemon does
    # (tests/tui/fake_client.py; the daemon's pages: tests/e2e/).
    fake = FakeClient()
    cid = fake.add(CWD, items=tuple(f"m{n}" for n in range(55)))
    app = VaalaApp(cwd=CWD, client=fake, conversation_id=cid)
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
        assert "conversation/read" in fake.methods()  # the oldest came from the daemon
        assert transcript.item_widgets[0].item.get("text") == "m0"
        top = transcript.item_widgets[0]
        settled = []
        while len(settled) < 3 or len(set(settled[-3:])) > 1:
            await pilot.pause(0.05)
            settled.append(top.virtual_region.y - transcript.scroll_y)
        offset = settled[-1]
        # Live items still arrive at the bottom while the user reads further up.
        fake.turn(cid, "late", "a reply")
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
