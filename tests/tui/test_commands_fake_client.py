"""Commands, keys and pickers of the terminal UI on what it already has, on a fake client (no
daemon: tests/tui/fake_client.py): the completion popup and /help, /exit and /quit, the /model
picker's order, the Ctrl+P palette's custom commands, /continue's answer when nothing was cut.
What the daemon does with a command is tested against the real daemon (tests/README.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import OptionList

from openvaala_server.client import RpcError
from openvaala_tui.app import VaalaApp
from openvaala_tui.history_actions import NOTHING_TO_CONTINUE
from openvaala_tui.screens import ListPicker
from tests.tui.conftest import notices, ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.test_pilot_habits import popup_values


async def test_slash_completion_popup(tmp_path: Path) -> None:
    app = VaalaApp(cwd=str(tmp_path), client=FakeClient())
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("/", "r", "e")
        expected = ["/resume", "/rewind", "/remember", "/rename"]
        await wait_for(pilot, lambda: popup_values(app) == expected)
        await pilot.press("down", "down", "down", "tab")
        assert app.composer.text == "/rename "
        assert not popup_values(app)
        await pilot.press("ctrl+c")
        await pilot.press("/", "h", "e")
        await wait_for(pilot, lambda: popup_values(app) == ["/help"])
        await pilot.press("enter")  # takes the completion ...
        assert app.composer.text == "/help "
        await pilot.press("enter")  # ... and then runs it
        await wait_for(pilot, lambda: any("Commands:" in n for n in notices(app)))


@pytest.mark.parametrize("command", ["/exit", "/quit"])
async def test_exit_and_quit_leave_the_ui(command: str, tmp_path: Path) -> None:
    app = VaalaApp(cwd=str(tmp_path), client=FakeClient())
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, command)
        await wait_for(pilot, lambda: app.return_code == 0, what=command)


async def test_model_picker_starts_on_the_current_model_and_stops_at_the_end(
    tmp_path: Path,
) -> None:
    # The daemon lists its models in the config's order; the conversation's is the first.
    fake = FakeClient(models=("demo", "other", "third"))
    app = VaalaApp(cwd=str(tmp_path), client=fake)
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        app.run_slash("model", "")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="the picker")
        options = app.screen.query_one(OptionList)
        names = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert names[-1] != "demo"  # the current one is not the last: the old default
        assert options.highlighted is not None and names[options.highlighted] == "demo"
        for _ in range(len(names) + 1):
            await pilot.press("down")
        assert options.highlighted == len(names) - 1  # no wrap to the top
        await pilot.press("escape")


async def test_continue_with_nothing_cut_says_so_once(tmp_path: Path) -> None:
    # What the daemon answers a resume with nothing cut (tests/e2e/test_resume_e2e.py).
    def busy(params: dict[str, Any]) -> Any:
        raise RpcError({"code": -32000, "message": "busy", "data": {"kind": "not_idle"}})

    fake = FakeClient({"turn/resume": busy})
    app = VaalaApp(cwd=str(tmp_path), client=fake)
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await app.slash("continue", "")
        await wait_for(pilot, lambda: bool(notices(app)), what="the answer")
        assert notices(app) == [NOTHING_TO_CONTINUE]
        assert fake.methods().count("turn/resume") == 1


async def test_the_palette_lists_custom_commands(tmp_path: Path) -> None:
    project = tmp_path / ".openvaala" / "commands"
    project.mkdir(parents=True)
    (project / "explain.md").write_text("---\ndescription: Explain simply\n---\nExplain it.\n")
    app = VaalaApp(cwd=str(tmp_path), client=FakeClient())
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="palette")
        await pilot.press(*"explain")
        found = app.screen.query_one(CommandList)
        await wait_for(pilot, lambda: found.option_count > 0, what="a hit")
        assert "Explain simply" in str(found.get_option_at_index(0).prompt)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.composer.text == "/explain ", what="the composer")
        assert app.composer.has_focus
