"""The terminal UI shows what "allow for this conversation" covers before the user presses `a`,
and never claims a grant the daemon could not make (docs/security.md, "Approvals"). Real daemon,
demo model (`run: CMD`), an agent with `approval = "always"`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Label, Static

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.approval import ONCE_ONLY_HINT
from tests.tui.conftest import Clients, notices
from tests.tui.test_pilot_approvals import approval_config, asked, turn_over


@pytest.fixture
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("work")


def body(app: VaalaApp) -> str:
    return str(app.approval_prompt.query_one("#approval-body", Static).render())


def hint(app: VaalaApp) -> str:
    return str(app.approval_prompt.query_one("#approval-hint", Label).render())


async def test_the_prompt_names_the_exact_command_a_grant_covers(
    daemon_factory: Any, clients: Clients, workdir: Path
) -> None:
    daemon = daemon_factory(approval_config())
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon))
    async with app.run_test(size=(120, 40)) as pilot:
        await asked(pilot, "echo granted")
        scope = "shell: exactly the command `echo granted`; nothing else"
        assert f"a: Allow for this conversation: {scope}" in body(app)
        assert "a allow for this conversation" in hint(app)
        await pilot.press("a")
        await turn_over(pilot, app)
        assert f"Allowed for this conversation · shell: echo granted · covers {scope}" in notices(
            app
        )


async def test_a_command_with_a_shell_operator_is_never_claimed_granted(
    daemon_factory: Any, clients: Clients, workdir: Path
) -> None:
    daemon = daemon_factory(approval_config())
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon))
    async with app.run_test(size=(120, 40)) as pilot:
        await asked(pilot, "echo one > a.txt")
        assert "Cannot be allowed for this conversation: the command uses a shell operator" in (
            body(app)
        )
        assert hint(app) == ONCE_ONLY_HINT
        prompt = app.approval_prompt
        pending = prompt.approval
        await pilot.press("a")  # not offered: nothing is answered, the prompt stays
        await pilot.pause()
        assert prompt.display and prompt.approval == pending
        assert not [n for n in notices(app) if n.startswith("Allowed for this conversation")]
        await pilot.press("y")
        await turn_over(pilot, app)
        assert "Allowed once · shell: echo one > a.txt" in notices(app)
        assert (workdir / "a.txt").read_text() == "one\n"
