"""`openvaala --continue` and `--resume [ID]`, on the TUI's side: the app opened with those
options on a fake client holding stored conversations (tests/tui/fake_client.py; what the daemon
lists and refuses: tests/e2e/); and `--cwd` naming no directory fails before the TUI opens."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import OptionList

from openvaala_tui import app as app_module
from openvaala_tui.app import VaalaApp
from openvaala_tui.screens import ResumeScreen
from openvaala_tui.widgets.items import UserMessage
from tests.tui.conftest import notices, ready, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD


def sent(app: VaalaApp) -> list[str]:
    return [str(w.item.get("text")) for w in app.transcript.query(UserMessage)]


async def test_continue_opens_the_last_conversation_here() -> None:
    fake = FakeClient()
    fake.add(CWD, items=("older here",))
    latest = fake.add(CWD, items=("latest here",))
    fake.add("/home/user/elsewhere", items=("newest, elsewhere",))
    app = VaalaApp(cwd=CWD, client=fake, continue_last=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        assert app.view.conversation_id == latest
        await wait_for(pilot, lambda: sent(app) == ["latest here"], what="its transcript")
    assert "conversation/create" not in fake.methods()


async def test_continue_with_nothing_here_starts_a_new_one() -> None:
    fake = FakeClient()
    fake.add("/home/user/elsewhere", items=("elsewhere",))
    app = VaalaApp(cwd=CWD, client=fake, continue_last=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: any("No earlier conversation" in n for n in notices(app)))
    assert fake.params_of("conversation/create") == [{"cwd": CWD}]


async def test_resume_id_and_resume_with_the_picker() -> None:
    fake = FakeClient()
    first = fake.add(CWD, items=("the first",))
    fake.add(CWD, items=("the second",))

    app = VaalaApp(cwd=CWD, client=fake, resume_id=first)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        assert app.view.conversation_id == first
        await wait_for(pilot, lambda: sent(app) == ["the first"], what="its transcript")

    again = FakeClient()  # the first app closed its client: a new one, the same daemon
    again.conversations = fake.conversations
    picker = VaalaApp(cwd=CWD, client=again, pick=True)
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


async def test_resume_an_unknown_id_fails(capsys: pytest.CaptureFixture[str]) -> None:
    unknown = "f" * 32
    app = VaalaApp(cwd=CWD, client=FakeClient(), resume_id=unknown)
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
