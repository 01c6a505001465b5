"""Focus, typing-ahead and picker fixes of the terminal UI, against one real daemon:

- the Waiting panel that empties while focused hands the focus to the composer;
- text typed before the app has handled a Tab-queued message is the next message, never merged;
- while a waiting message is edited the footer offers `esc Cancel edit`.

(The `/model` picker, `/continue` with nothing cut and the Ctrl+P palette need no daemon:
test_commands_fake_client.py; nor do the `/resume` search and `/tree`: test_pickers_fake_client.py.)

The agent asks before every shell command (`approval = "always"`), so a turn holds at its
approval until another client answers: no timing decides what is waiting when."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot

from openvaala_server.client import Client
from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.footer import QuietFooter
from openvaala_tui.widgets.inbox import InboxList, InboxPanel
from tests.support.daemon import Daemon
from tests.support.running import running_daemon
from tests.tui.conftest import Clients, ready, type_and_send, wait_for

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[models.other]
provider = "demo"
pace_ms = 0

[models.third]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
approval = "always"
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("fixes"), CONFIG) as d:
        yield d


@pytest.fixture
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("work")


async def held(pilot: Pilot[int], app: VaalaApp) -> str:
    """Start a turn that waits for its approval; its approval id."""
    await type_and_send(pilot, "run: echo held")
    await wait_for(pilot, lambda: bool(app.view.approvals), what="the approval")
    app.composer.focus()  # the prompt took the focus: type in the composer again
    return next(iter(app.view.approvals))


async def allow_from(other: Client, app: VaalaApp, approval_id: str) -> None:
    params = {"conversationId": app.view.conversation_id, "approvalId": approval_id}
    await other.request("approval/respond", {**params, "decision": "allow"})


def waiting(app: VaalaApp) -> list[str]:
    return [str(i.get("text")) for i in app.query_one(InboxPanel).inputs]


def footer_keys(app: VaalaApp) -> str:
    return " ".join(str(k.render()) for k in app.query_one(QuietFooter).children)


async def test_the_emptied_waiting_panel_hands_the_focus_back(
    home: Daemon, clients: Clients, workdir: Path
) -> None:
    app = VaalaApp(cwd=str(workdir), client=await clients(home))
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        approval = await held(pilot, app)
        await type_and_send(pilot, "queued one", key="tab")
        await wait_for(pilot, lambda: waiting(app) == ["queued one"], what="the queued message")
        await pilot.press("ctrl+w")
        assert app.query_one(InboxList).has_focus
        await allow_from(await clients(home, name="other"), app, approval)
        panel = app.query_one(InboxPanel)
        await wait_for(pilot, lambda: not panel.display, what="the panel to empty")
        assert app.composer.has_focus
        await pilot.press("x", "y")
        assert app.composer.text == "xy"  # typed keys reach the composer


async def test_typing_ahead_after_tab_is_the_next_message(
    home: Daemon, clients: Clients, workdir: Path
) -> None:
    app = VaalaApp(cwd=str(workdir), client=await clients(home))
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await held(pilot, app)
        composer = app.composer
        composer.set_text("q-a queued")
        # The keys arrive before the app has handled the first message (a loaded machine):
        # the composer's own key handler runs them one after another, with no pause between.
        await composer._on_key(events.Key("tab", None))
        composer.insert("q-b queued")
        await composer._on_key(events.Key("tab", None))
        await wait_for(pilot, lambda: len(waiting(app)) == 2, what="two waiting messages")
        assert waiting(app) == ["q-a queued", "q-b queued"]
        assert composer.is_empty


async def test_editing_a_waiting_message_shows_esc_cancel_edit(
    home: Daemon, clients: Clients, workdir: Path
) -> None:
    app = VaalaApp(cwd=str(workdir), client=await clients(home))
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await held(pilot, app)
        await type_and_send(pilot, "to edit", key="tab")
        await wait_for(pilot, lambda: waiting(app) == ["to edit"], what="the queued message")
        assert "Interrupt" in footer_keys(app)
        await pilot.press("ctrl+w")
        await pilot.press("e")
        await wait_for(pilot, lambda: "Cancel edit" in footer_keys(app), what="the footer")
        assert "Interrupt" not in footer_keys(app)
        await pilot.press("escape")
        assert app.composer.editing_input is None and app.composer.is_empty
        await wait_for(pilot, lambda: "Interrupt" in footer_keys(app), what="the footer back")
        assert waiting(app) == ["to edit"]  # Esc cancelled the edit, not the turn
        root = app.view.root
        assert root is not None and root.running
