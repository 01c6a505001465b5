"""A `!command`'s changes are checkpointed as a shell call of the last turn is: `/diff` shows them
(docs/design.md, "`!command` changes are checkpointed"). Real daemon, real sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openvaala_tui.app import VaalaApp
from openvaala_tui.diff_actions import DiffScreen
from openvaala_tui.widgets.items import UserMessage
from tests.tui.conftest import Clients, demo_config, notices, ready, type_and_send, wait_for
from tests.tui.test_pilot_diff import diff_text


def shell_messages(app: VaalaApp) -> list[str]:
    return [
        str(w.item.get("text"))
        for w in app.transcript.query(UserMessage)
        if w.item.get("origin") == "shell"
    ]


async def test_diff_shows_what_a_bang_command_changed(
    daemon_factory: Any, clients: Clients, tmp_path: Path
) -> None:
    work = tmp_path / "project"
    work.mkdir()
    (work / "notes.txt").write_text("old line\n")
    daemon = daemon_factory(demo_config())
    app = VaalaApp(cwd=str(work), client=await clients(daemon))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "hello")
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: not root.running and bool(root.items), what="the turn")
        await type_and_send(pilot, "!echo by hand > notes.txt")
        await wait_for(
            pilot, lambda: bool(shell_messages(app)), what=f"the command ({notices(app)})"
        )
        assert (work / "notes.txt").read_text() == "by hand\n"
        await app.slash("diff", "")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen), what="the diff")
        text = diff_text(app)
        assert "-old line" in text and "+by hand" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, DiffScreen))
        # Undo (as a rewind to the turn's message) puts the file back as it was.
        await app.slash("undo", "")
        await wait_for(
            pilot,
            lambda: (work / "notes.txt").read_text() == "old line\n",
            what=f"the file put back ({notices(app)})",
        )
