"""Appearance: the main screens drawn from a fixed snapshot, at a pinned size, with no daemon."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot

from openvaala_tui.app import VaalaApp
from openvaala_tui.screens import AgentsScreen, ListPicker
from tests.tui import fixed

SIZE = (100, 40)


def fixed_app() -> VaalaApp:
    return VaalaApp(cwd="/home/user/project", snapshot=fixed.snapshot())


def test_main_screen(snap_compare: Any) -> None:
    assert snap_compare(fixed_app(), terminal_size=SIZE)


def test_retry_and_reconnecting_in_the_status_bar(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        retry = {"sessionId": fixed.ROOT, "attempt": 3, "maxAttempts": 10, "delaySeconds": 4}
        await app.draw(app.view.apply({"method": "retry/scheduled", "params": retry}))
        await app.draw(
            app.view.apply({"method": "client/connection", "params": {"state": "reconnecting"}})
        )
        await pilot.pause()

    assert snap_compare(fixed_app(), terminal_size=SIZE, run_before=run_before)


def test_rewind_picker(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        root = app.view.root
        assert root is not None
        choices = [(str(m["itemId"]), str(m["text"])) for m in root.user_messages()]
        await app.push_screen(ListPicker("Rewind to before which message?", choices))
        await pilot.pause()

    assert snap_compare(fixed_app(), terminal_size=SIZE, run_before=run_before)


def test_agents_tree(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        sessions = [s.info for s in app.view.sessions.values()]
        await app.push_screen(AgentsScreen(sessions, fixed.ROOT))
        await pilot.pause()

    assert snap_compare(fixed_app(), terminal_size=SIZE, run_before=run_before)


def test_following_a_subagent(snap_compare: Any) -> None:
    """The transcript of a running subagent: its parent's task, its work, its status bar."""

    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        app.following = fixed.CHILD
        await app.redraw()
        await pilot.pause()

    assert snap_compare(fixed_app(), terminal_size=SIZE, run_before=run_before)
