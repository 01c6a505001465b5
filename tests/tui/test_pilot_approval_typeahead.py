"""An approval prompt that appears while the user is typing is never answered by those keys:
it waits a moment before its letters act, and what is typed meanwhile goes to the message
(docs/design.md, "Approvals ignore typed-ahead keys"). Real daemon, `approval = "always"`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.approval import KEYS_HINT, ONCE_ONLY_HINT, WAIT_HINT, ApprovalPrompt
from tests.tui.conftest import Clients, wait_for
from tests.tui.test_pilot_approvals import approval_config, asked, turn_over


@pytest.fixture
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The conversation's own directory (the daemon's holds its private config)."""
    return tmp_path_factory.mktemp("work")


def hint(app: VaalaApp) -> str:
    return str(app.approval_prompt.query_one("#approval-hint").render())


async def test_keys_typed_as_the_prompt_appears_go_to_the_message(
    daemon_factory: Any,
    clients: Clients,
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Longer than any test step: the prompt stays unarmed until Ctrl+O.
    monkeypatch.setattr(ApprovalPrompt, "ARM_DELAY", 600.0, raising=False)
    daemon = daemon_factory(approval_config())
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 40)) as pilot:
        await asked(pilot, f"echo ran > {workdir / 'made.txt'}")
        prompt = app.approval_prompt
        assert prompt.has_focus  # the composer was empty: the prompt took the focus
        # The user was typing the next message: its `a` must not allow the call.
        await pilot.press(*"q-a queued")
        await wait_for(pilot, lambda: app.composer.text == "q-a queued", what="the typed text")
        assert app.composer.has_focus
        assert prompt.approval is not None and not app.view.answered_here
        assert prompt.border_subtitle == "Ctrl+O to answer"
        assert hint(app) == WAIT_HINT  # it said why the letters went on
        # Moving to the prompt on purpose answers at once.
        await pilot.press("ctrl+o")
        assert prompt.has_focus and prompt.armed
        assert hint(app) in (KEYS_HINT, ONCE_ONLY_HINT)
        await pilot.press("n")
        block = await turn_over(pilot, app)
        assert block.status == "error"
        assert not (workdir / "made.txt").exists()
        assert app.composer.text == "q-a queued"  # nothing typed was lost


async def test_the_answer_keys_act_once_the_moment_has_passed(
    daemon_factory: Any,
    clients: Clients,
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ApprovalPrompt, "ARM_DELAY", 0.2, raising=False)
    daemon = daemon_factory(approval_config())
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 40)) as pilot:
        await asked(pilot, f"echo ran > {workdir / 'made.txt'}")
        prompt = app.approval_prompt
        await wait_for(pilot, lambda: prompt.armed, what="the prompt to accept its keys")
        assert prompt.has_focus and hint(app) in (KEYS_HINT, ONCE_ONLY_HINT)
        await pilot.press("y")
        block = await turn_over(pilot, app)
        assert block.status == "done"
        assert (workdir / "made.txt").read_text() == "ran\n"
