"""A file too large for the checkpoints in the terminal UI, against a real daemon: the rewind's
question says it will be left as it is, and `/undo` and the rewind say so afterwards."""

from __future__ import annotations

from typing import Any

from openvaala_tui.app import VaalaApp
from openvaala_tui.screens import ConfirmScreen, ListPicker
from tests.tui.conftest import Clients, notices, ready, type_and_send, wait_for
from tests.tui.test_pilot_checkpoints import CONFIG, finished_turn

LEFT = "data.db was too large to keep in a checkpoint"


async def test_undo_and_rewind_name_the_file_too_large_to_keep(
    daemon_factory: Any, clients: Clients
) -> None:
    daemon = daemon_factory(CONFIG)
    work = daemon.workdir
    client = await clients(daemon)
    app = VaalaApp(cwd=str(work), client=client)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await finished_turn(pilot, app, "run: echo one > a.txt")
        await finished_turn(pilot, app, "run: head -c 11000000 /dev/zero > data.db")
        await finished_turn(pilot, app, "run: head -c 12000000 /dev/zero > data.db")

        await type_and_send(pilot, "/undo")  # the last turn: only the large file
        await wait_for(
            pilot,
            lambda: any("nothing was put back" in n and LEFT in n for n in notices(app)),
            what="the undo's note",
        )
        assert (work / "data.db").stat().st_size == 12_000_000

        first = app.view.conversation_id
        app.composer.clear()
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="picker")
        await pilot.press("up", "up", "enter")  # the first message: turns 1 and 2 to undo
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="question")
        question = app.screen.question  # type: ignore[attr-defined]
        assert "a.txt" in question and LEFT in question, question
        await pilot.press("y")
        await wait_for(pilot, lambda: app.view.conversation_id != first, what="the rewind")
        assert not (work / "a.txt").exists() and (work / "data.db").exists()
        await wait_for(
            pilot,
            lambda: any("Files restored: a.txt" in n and LEFT in n for n in notices(app)),
            what="the rewind's note",
        )
