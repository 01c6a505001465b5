"""`/diff` shows what the conversation changed in its working directory, from its checkpoints:
after a shell turn that edits one file and creates another, both show, coloured as the tool
results' diffs are; a file the user then puts back as it was drops out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openvaala_tui.app import VaalaApp
from openvaala_tui.diff_actions import DiffScreen
from openvaala_tui.widgets.items import ToolBlock
from tests.tui.conftest import Clients, demo_config, notices, ready, type_and_send, wait_for


def diff_text(app: VaalaApp) -> str:
    screen = app.screen
    assert isinstance(screen, DiffScreen)
    return str(screen.query_one("#diff-text").render())


async def test_diff_after_a_shell_turn_shows_its_changes(
    daemon_factory: Any, clients: Clients, tmp_path: Path
) -> None:
    work = tmp_path / "project"
    work.mkdir()
    (work / "notes.txt").write_text("old line\n")
    (work / "untouched.txt").write_text("same\n")
    daemon = daemon_factory(demo_config())
    app = VaalaApp(cwd=str(work), client=await clients(daemon))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await app.slash("diff", "")
        await wait_for(pilot, lambda: any("changed no file" in n for n in notices(app)))
        await type_and_send(pilot, "run: echo new line > notes.txt && echo fresh > made.txt")
        root = app.view.root
        assert root is not None
        await wait_for(
            pilot,
            lambda: any(b.status == "done" for b in app.transcript.query(ToolBlock)),
            what="the shell call",
        )
        await wait_for(pilot, lambda: not root.running, what="the turn to end")
        assert (work / "made.txt").exists()

        await app.slash("diff", "")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen), what="the diff")
        text = diff_text(app)
        assert "-old line" in text and "+new line" in text
        assert "+fresh" in text
        assert "untouched" not in text
        title = str(app.screen.query_one(".dialog-title").render())
        assert "2 files" in title
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, DiffScreen))

        (work / "notes.txt").write_text("old line\n")  # put back by hand
        await app.slash("diff", "")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen), what="the diff")
        assert "notes.txt" not in diff_text(app)
        assert "made.txt" in diff_text(app)
