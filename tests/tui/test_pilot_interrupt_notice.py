"""After an interrupt (Esc or Ctrl+C during a turn) the transcript says so once, in words for the
user: not the daemon's note for the model ("The user interrupted the previous turn…") beside a
second notice of the terminal UI's own."""

from __future__ import annotations

from typing import Any

import pytest

from openvaala_server.client.notice_words import FOR_PEOPLE
from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import Notice
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate
from tests.tui.conftest import Clients, wait_for
from tests.tui.test_pilot_ctrl_c import _on_a_held_turn, _start_the_turn


def shown_notices(app: VaalaApp) -> list[str]:
    """The notice lines as drawn in the transcript."""
    return [widget.render().plain for widget in app.transcript.query(Notice)]


def daemon_notice_arrived(app: VaalaApp) -> bool:
    return any(w.item.get("kind") == "interrupted" for w in app.transcript.query(Notice))


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_an_interrupt_is_said_once_in_words_for_the_user(
    fake_openai: FakeProvider, daemon_factory: Any, clients: Clients, key: str
) -> None:
    gate = Gate()
    _, app = await _on_a_held_turn(fake_openai, daemon_factory, clients, gate)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            root = await _start_the_turn(pilot, app)
            await pilot.press(key)
            await wait_for(pilot, lambda: not root.running, what="the turn to stop")
            await wait_for(pilot, lambda: daemon_notice_arrived(app), what="the daemon's notice")
            await pilot.pause()
            assert shown_notices(app) == [f"ⓘ {FOR_PEOPLE['interrupted']}"]
    finally:
        gate.open()
