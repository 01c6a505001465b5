"""Checkpoints and the tree in the terminal UI, against a real daemon: `/undo` puts a turn's files
back, a rewind asks whether to restore files (and again before overwriting the user's own edit),
`/tree` lists forks and rewinds and opens one, `/continue` without a cut turn says so."""

from __future__ import annotations

from typing import Any

from openvaala_tui.app import VaalaApp
from openvaala_tui.screens import ConfirmScreen, ListPicker
from openvaala_tui.widgets.items import AgentMessage
from tests.tui.conftest import Clients, demo_config, notices, ready, type_and_send, wait_for

CONFIG = demo_config() + 'approval = "never"\n'


async def finished_turn(pilot: Any, app: VaalaApp, text: str) -> None:
    count = len(app.transcript.query(AgentMessage))
    await type_and_send(pilot, text)
    root = app.view.root
    assert root is not None
    await wait_for(
        pilot,
        lambda: len(app.transcript.query(AgentMessage)) > count and not root.running,
        what="the turn",
    )


async def test_undo_rewind_with_files_and_tree(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(CONFIG)
    work = daemon.workdir
    (work / "kept.txt").write_text("mine\n")
    client = await clients(daemon)
    app = VaalaApp(cwd=str(work), client=client)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await finished_turn(pilot, app, "run: echo one > a.txt")
        await finished_turn(pilot, app, "run: echo two > b.txt && echo changed > kept.txt")
        assert (work / "b.txt").exists() and (work / "kept.txt").read_text() == "changed\n"

        # /undo: the last turn's files only.
        await type_and_send(pilot, "/undo")
        await wait_for(pilot, lambda: not (work / "b.txt").exists(), what="/undo")
        assert (work / "kept.txt").read_text() == "mine\n" and (work / "a.txt").exists()
        await wait_for(pilot, lambda: any("Undone" in n for n in notices(app)), what="notice")

        # Rewind to the first message, restoring files; the user edited a.txt since.
        (work / "a.txt").write_text("my edit\n")
        first = app.view.conversation_id
        app.composer.clear()
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="picker")
        await pilot.press("up", "enter")  # the first message
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="question")
        assert "a.txt" in app.screen.question  # type: ignore[attr-defined]
        await pilot.press("y")
        # The user's edit: asked again before it is overwritten.
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, ConfirmScreen) and "Changed since" in app.screen.question
            ),
            what="conflict question",
        )
        await pilot.press("y")
        await wait_for(pilot, lambda: app.view.conversation_id != first, what="the rewind")
        assert not (work / "a.txt").exists() and (work / "kept.txt").read_text() == "mine\n"
        assert app.composer.text == "run: echo one > a.txt"
        await wait_for(
            pilot, lambda: any("Files restored: a.txt" in n for n in notices(app)), what="note"
        )

        # /tree: the original and its rewind; open the original again.
        await type_and_send(pilot, "/tree")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="tree")
        picker = app.screen
        assert isinstance(picker, ListPicker)
        labels = [label for _, label in picker.choices]
        assert [value for value, _ in picker.choices] == [first, app.view.conversation_id]
        assert "rewind" in labels[1] and "●" in labels[1] and "└" in labels[1]
        await pilot.press("up", "enter")
        await wait_for(pilot, lambda: app.view.conversation_id == first, what="switch")

        # Nothing was cut: /continue says so.
        await type_and_send(pilot, "/continue")
        await wait_for(
            pilot, lambda: any("not cut" in n for n in notices(app)), what="continue refused"
        )


async def test_a_rewind_in_a_fork_offers_to_restore_the_parents_files(
    daemon_factory: Any, clients: Clients
) -> None:
    """In a fork with no turn of its own, a rewind to a message it copied asks about the files
    the parent's turns changed since, and restores them (docs/design.md, "Restoring turns a
    fork inherited")."""
    daemon = daemon_factory(CONFIG)
    work = daemon.workdir
    client = await clients(daemon)
    app = VaalaApp(cwd=str(work), client=client)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await finished_turn(pilot, app, "run: echo one > a.txt")
        await finished_turn(pilot, app, "run: echo two >> a.txt")
        parent = app.view.conversation_id
        await type_and_send(pilot, "/fork")
        await wait_for(pilot, lambda: app.view.conversation_id != parent, what="the fork")
        fork = app.view.conversation_id
        await wait_for(pilot, lambda: app.view.root is not None, what="the fork's view")

        app.composer.clear()
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="picker")
        await pilot.press("enter")  # the last message: the parent's second turn
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="question")
        assert "a.txt" in app.screen.question  # type: ignore[attr-defined]
        await pilot.press("y")
        await wait_for(pilot, lambda: app.view.conversation_id != fork, what="the rewind")
        assert (work / "a.txt").read_text() == "one\n"
        assert app.composer.text == "run: echo two >> a.txt"


async def test_a_rewind_says_which_turns_it_could_not_restore(
    daemon_factory: Any, clients: Clients
) -> None:
    """A fork whose parent was deleted: rewinding to a message it copied puts back the fork's own
    turn's files and says that the parent's turn could not be (`missingTurnIds`)."""
    daemon = daemon_factory(CONFIG)
    work = daemon.workdir
    client = await clients(daemon)
    other = await clients(daemon)
    app = VaalaApp(cwd=str(work), client=client)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await finished_turn(pilot, app, "run: echo one > a.txt")
        parent = app.view.conversation_id
        await type_and_send(pilot, "/fork")
        await wait_for(pilot, lambda: app.view.conversation_id != parent, what="the fork")
        fork = app.view.conversation_id
        await wait_for(pilot, lambda: app.view.root is not None, what="the fork's view")
        await finished_turn(pilot, app, "run: echo three > c.txt")
        await other.request("conversation/delete", {"conversationId": parent})

        app.composer.clear()
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="picker")
        await pilot.press("up", "enter")  # the first message, copied from the parent
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="question")
        assert "c.txt" in app.screen.question  # type: ignore[attr-defined]
        await pilot.press("y")
        await wait_for(pilot, lambda: app.view.conversation_id != fork, what="the rewind")
        assert (work / "a.txt").exists() and not (work / "c.txt").exists()
        await wait_for(
            pilot,
            lambda: any(
                "Files restored: c.txt" in n and "1 turn could not be restored" in n
                for n in notices(app)
            ),
            what="the note",
        )
