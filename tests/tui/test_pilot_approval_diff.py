"""The terminal UI's approval prompt shows what a write would change, as a coloured diff, before
the user answers (docs/protocol.md, approval/requested `diffs`). Real daemon, demo model
(`call: write_file {...}`), an agent with `approval = "always"`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from openvaala_tui.app import VaalaApp
from tests.tui.conftest import Clients, ready, type_and_send, wait_for
from tests.tui.test_pilot_approvals import approval_config, turn_over


@pytest.fixture
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("work")


async def test_a_write_over_a_file_shows_its_diff_in_the_prompt(
    daemon_factory: Any, clients: Clients, workdir: Path
) -> None:
    (workdir / "notes.txt").write_text("keep\nold line\n")
    daemon = daemon_factory(approval_config())
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        arguments = {"path": "notes.txt", "content": "keep\nnew line\n"}
        await type_and_send(pilot, f"call: write_file {json.dumps(arguments)}")
        prompt = app.approval_prompt
        await wait_for(pilot, lambda: prompt.approval is not None, what="the approval prompt")
        pane = prompt.query_one("#approval-diff", Static)
        assert pane.display and pane.border_title == "diff · 1 file · +1 −1"
        drawn = str(pane.render())
        assert "@@ -1,2 +1,2 @@\n keep\n-old line\n+new line" in drawn
        await pilot.press("y")
        await turn_over(pilot, app)
        assert (workdir / "notes.txt").read_text() == "keep\nnew line\n"
