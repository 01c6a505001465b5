"""Ctrl+C inside the quit question ("stop it / leave it running / cancel") cancels it, as Esc
does, and leaves the running turn alone (docs/design.md, "Ctrl+C and quitting the TUI")."""

from __future__ import annotations

from typing import Any

from openvaala_tui.quit_screen import QuitScreen
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate
from tests.tui.conftest import Clients, wait_for
from tests.tui.test_pilot_ctrl_c import (
    _on_a_held_turn,
    _start_the_turn,
    _until_on_disk,
)


async def test_ctrl_c_in_the_quit_question_cancels_it_and_the_turn_runs_on(
    fake_openai: FakeProvider, daemon_factory: Any, clients: Clients
) -> None:
    gate = Gate()
    daemon, app = await _on_a_held_turn(fake_openai, daemon_factory, clients, gate)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            root = await _start_the_turn(pilot, app)
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen), what="the question")
            await pilot.press("ctrl+c")
            await wait_for(
                pilot, lambda: not isinstance(app.screen, QuitScreen), what="the question to close"
            )
            assert app.is_running and root.running
            gate.open()  # the model finishes: the turn was never interrupted
            await wait_for(pilot, lambda: not root.running, what="the turn to end", timeout=20)
            cid = str(app.view.conversation_id)
            await _until_on_disk(daemon, cid, "and done.")
            on_disk = "".join(
                p.read_text() for p in daemon.data_dir.conversation_dir(cid).glob("*.jsonl")
            )
            assert '"interrupted"' not in on_disk
    finally:
        gate.open()
