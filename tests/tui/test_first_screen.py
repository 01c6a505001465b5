"""The first screen: where the conversation runs, with which agent, model and config, a few
tips, and a footer that keeps its important keys at 80×24."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.welcome import Welcome
from tests.tui import fixed
from tests.tui.conftest import ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CONFIG_PATH, CWD

SMALL = (80, 24)


def empty_snapshot() -> dict[str, Any]:
    snapshot = fixed.snapshot()
    root = snapshot["sessions"][0]
    root.update(items=[], turn=None, inbox=[], hasMore=False, status="idle", usage={})
    snapshot["sessions"] = [root]
    snapshot["conversation"].update(status="idle", title="New conversation")
    return snapshot


def welcome_of(app: VaalaApp) -> str:
    return str(app.transcript.query_one(Welcome).content)


def test_first_screen_at_80x24(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/user")
    monkeypatch.setenv("OPENVAALA_CONFIG", "/home/user/.config/openvaala/config.toml")

    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        text = welcome_of(app)
        for shown in ("~/project", "default", "demo", "~/.config/openvaala/config.toml"):
            assert shown in text
        for tip in ("run:", "think:", "spawn:", "/help"):
            assert tip in text
        await pilot.pause()

    app = VaalaApp(cwd="/home/user/project", snapshot=empty_snapshot())
    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


async def test_first_screen_names_the_daemon_conversation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On what the daemon answers (a fake client: tests/tui/fake_client.py): its directory,
    agent and model; the welcome goes once the conversation has something in it."""
    fake = FakeClient()
    fake.answer_sends()
    monkeypatch.setenv("OPENVAALA_CONFIG", CONFIG_PATH)
    app = VaalaApp(cwd="/srv/work/project", client=fake)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        welcome = app.transcript.query_one(Welcome)
        await wait_for(pilot, lambda: welcome.display, what="the welcome")
        text = welcome_of(app)
        assert "/srv/work/project" in text
        assert "agent default · model demo" in text
        assert CONFIG_PATH in text
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: not welcome.display, what="the welcome to go")


async def test_the_welcome_names_the_config_file_the_daemon_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The daemon's file (its `initialize` says which), not the one this shell would name."""
    daemons = "/srv/daemon/config.toml"
    fake = FakeClient(config={"path": daemons, "state": "ok", "message": ""})
    monkeypatch.setenv("OPENVAALA_CONFIG", "/elsewhere/config.toml")
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        welcome = app.transcript.query_one(Welcome)
        await wait_for(pilot, lambda: welcome.display, what="the welcome")
        text = welcome_of(app)
        assert daemons in text
        assert "/elsewhere" not in text
