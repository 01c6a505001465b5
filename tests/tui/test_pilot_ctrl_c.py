"""Ctrl+C as Codex and Claude Code users expect it: it stops a running turn first, never
quits over a draft (Up brings it back), and a quit while a turn runs asks whether to stop it or
leave it running in the daemon."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from textual.pilot import Pilot

from openvaala_server.client.view import SessionView
from openvaala_tui.app import VaalaApp
from openvaala_tui.quit_screen import QuitScreen
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.tui.conftest import Clients, notices, ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD

AGENT_ON_FAKE = """
[agents.default]
description = "General assistant"
model = "fake"
"""


async def _on_a_held_turn(
    fake_openai: FakeProvider, daemon_factory: Any, clients: Clients, gate: Gate
) -> tuple[Any, VaalaApp]:
    """A daemon whose model answers only once `gate` opens, and the app on it."""
    fake_openai.enqueue(Reply().text("Starting on it").wait(gate).text(" and done."))
    daemon = daemon_factory(fake_openai.config_toml("fake") + AGENT_ON_FAKE)
    return daemon, VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))


async def _start_the_turn(pilot: Pilot[int], app: VaalaApp) -> SessionView:
    await ready(pilot)
    await type_and_send(pilot, "a long job")
    root = app.view.root
    assert root is not None
    await wait_for(pilot, lambda: root.running, what="the turn to start")
    return root


async def test_ctrl_c_interrupts_a_running_turn(
    fake_openai: FakeProvider, daemon_factory: Any, clients: Clients
) -> None:
    gate = Gate()
    daemon, app = await _on_a_held_turn(fake_openai, daemon_factory, clients, gate)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            root = await _start_the_turn(pilot, app)
            await pilot.press("ctrl+c")
            await wait_for(pilot, lambda: not root.running, what="the turn to stop", timeout=20)
            assert app.is_running  # it stopped the turn, it did not quit
            await wait_for(
                pilot,
                lambda: any("interrupted" in text for text in notices(app)),
                what="the daemon's notice of the interrupt",
            )
            cid = str(app.view.conversation_id)
            on_disk = "".join(
                p.read_text() for p in daemon.data_dir.conversation_dir(cid).glob("*.jsonl")
            )
            assert '"interrupted"' in on_disk
    finally:
        gate.open()


def _on_disk(daemon: Any, cid: str) -> str:
    """Every journal of the conversation (`<session>.jsonl`: docs/storage.md), as one text."""
    return "".join(p.read_text() for p in daemon.data_dir.conversation_dir(cid).glob("*.jsonl"))


async def _until_on_disk(daemon: Any, cid: str, text: str) -> None:
    """The daemon goes on after the app quit: wait (generously) for `text` in its journal."""
    for _ in range(3000):  # 60 s: the daemon may be slow under load, never this slow
        if text in _on_disk(daemon, cid):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{text} never reached the journal: {_on_disk(daemon, cid)[-800:]}")


async def _answer_the_question(pilot: Pilot[int], app: VaalaApp, key: str) -> None:
    await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen), what="the question")
    await pilot.press(key)
    await wait_for(pilot, lambda: not app.is_running, what="the app to quit")


def _exit_message(app: VaalaApp, capsys: pytest.CaptureFixture[str]) -> str:
    """What the app printed as it quit; it always says how to come back."""
    said = " ".join(capsys.readouterr().err.split())
    assert f"openvaala --resume {app.view.conversation_id}" in said
    return said


async def test_ctrl_c_clears_a_draft_instead_of_quitting_and_up_brings_it_back() -> None:
    fake = FakeClient()  # the composer's keys: no daemon needed (tests/tui/fake_client.py)
    fake.answer_sends()
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "the first message")
        await pilot.press("ctrl+c")  # idle, empty: "again to quit"
        await pilot.press(*"a draft")
        await pilot.press("ctrl+c")  # within two seconds, but there is a draft: cleared
        assert app.composer.is_empty
        assert app.is_running
        await pilot.press("up")
        assert app.composer.text == "a draft"
        await pilot.press("up")
        assert app.composer.text == "the first message"
        await pilot.press("up")  # the oldest: it stays
        assert app.composer.text == "the first message"
        await pilot.press("down")
        assert app.composer.text == "a draft"
        await pilot.press("down")  # past the newest: what was typed before the walk (nothing)
        assert app.composer.is_empty


async def test_quitting_while_a_turn_runs_asks_and_stop_interrupts_it(
    fake_openai: FakeProvider,
    daemon_factory: Any,
    clients: Clients,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gate = Gate()
    daemon, app = await _on_a_held_turn(fake_openai, daemon_factory, clients, gate)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            root = await _start_the_turn(pilot, app)
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: isinstance(app.screen, QuitScreen), what="the question")
            assert root.running  # asking stops nothing
            await pilot.press("escape")  # not quitting after all
            await wait_for(pilot, lambda: not isinstance(app.screen, QuitScreen))
            assert app.is_running and root.running
            await type_and_send(pilot, "/quit")
            await _answer_the_question(pilot, app, "s")
        assert "Stopped the running turn." in _exit_message(app, capsys)
        await _until_on_disk(daemon, str(app.view.conversation_id), '"interrupted"')
    finally:
        gate.open()


async def test_quitting_while_a_turn_runs_can_leave_it_running(
    fake_openai: FakeProvider,
    daemon_factory: Any,
    clients: Clients,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gate = Gate()
    daemon, app = await _on_a_held_turn(fake_openai, daemon_factory, clients, gate)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await _start_the_turn(pilot, app)
            await type_and_send(pilot, "/quit")
            await _answer_the_question(pilot, app, "l")
        assert "The turn keeps running in the daemon." in _exit_message(app, capsys)
        gate.open()  # the model answers the rest to the daemon, with no client left
        await _until_on_disk(daemon, str(app.view.conversation_id), "and done.")
        assert '"interrupted"' not in _on_disk(daemon, str(app.view.conversation_id))
    finally:
        gate.open()
