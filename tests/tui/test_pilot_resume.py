"""`openvaala --continue` and `--resume [ID]`, on the TUI's side: the app opened with those
options against a real daemon; and `--cwd` naming no directory fails before the TUI opens."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from textual.widgets import OptionList

from openvaala_server.client import Client
from openvaala_tui import app as app_module
from openvaala_tui.app import VaalaApp
from openvaala_tui.screens import ResumeScreen
from openvaala_tui.widgets.items import UserMessage
from tests.tui.conftest import Clients, demo_config, notices, ready, wait_for


async def stored(client: Client, cwd: str, text: str) -> str:
    """A conversation in `cwd` with one finished turn (stored, listed)."""
    result = await client.request("conversation/create", {"cwd": cwd})
    cid = str(result["conversation"]["conversationId"])
    await client.request("input/send", {"conversationId": cid, "text": text, "mode": "queue"})
    for _ in range(500):
        listed = await client.request("conversation/list", {"limit": 50})
        if any(
            c["conversationId"] == cid and c.get("messageCount") and c["status"] == "idle"
            for c in listed["conversations"]
        ):
            return cid
        await asyncio.sleep(0.02)
    raise AssertionError("the conversation was not stored")


def sent(app: VaalaApp) -> list[str]:
    return [str(w.item.get("text")) for w in app.transcript.query(UserMessage)]


async def test_continue_opens_the_last_conversation_here(
    daemon_factory: Any, clients: Clients, tmp_path: Any
) -> None:
    daemon = daemon_factory(demo_config())
    setup = await clients(daemon, "setup")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    await stored(setup, str(daemon.workdir), "older here")
    latest = await stored(setup, str(daemon.workdir), "latest here")
    await stored(setup, str(elsewhere), "newest, elsewhere")
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon), continue_last=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        assert app.view.conversation_id == latest
        await wait_for(pilot, lambda: sent(app) == ["latest here"], what="its transcript")


async def test_continue_with_nothing_here_starts_a_new_one(
    daemon_factory: Any, clients: Clients
) -> None:
    daemon = daemon_factory(demo_config())
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon), continue_last=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: any("No earlier conversation" in n for n in notices(app)))


async def test_resume_id_and_resume_with_the_picker(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    setup = await clients(daemon, "setup")
    first = await stored(setup, str(daemon.workdir), "the first")
    await stored(setup, str(daemon.workdir), "the second")

    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon), resume_id=first)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        assert app.view.conversation_id == first
        await wait_for(pilot, lambda: sent(app) == ["the first"], what="its transcript")

    picker = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon, "picker"), pick=True)
    async with picker.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(picker.screen, ResumeScreen), what="the list")
        rows = picker.screen.query_one(OptionList)
        await wait_for(pilot, lambda: rows.option_count == 2, what="both rows")
        rows.focus()
        await pilot.press("down")
        await wait_for(pilot, lambda: rows.highlighted == 1, what="row two")
        await pilot.press("enter")
        await ready(pilot)
        assert picker.view.conversation_id == first


async def test_resume_an_unknown_id_fails(
    daemon_factory: Any, clients: Clients, capsys: pytest.CaptureFixture[str]
) -> None:
    daemon = daemon_factory(demo_config())
    unknown = "f" * 32
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon), resume_id=unknown)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: not app.is_running, what="the app to exit")
    assert app.return_code == 1
    assert f"no conversation {unknown}" in " ".join(capsys.readouterr().err.split())


def test_a_missing_cwd_fails_before_the_tui_opens(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nonexistent"
    assert app_module.main(str(missing)) == 2
    assert f"--cwd {missing} does not exist" in capsys.readouterr().err
