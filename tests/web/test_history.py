"""Checkpoints, the tree and bundles in the browser, against a real daemon: the History panel
undoes a turn's files and shows the tree, Restart from here asks whether to restore files (and
again before overwriting an edit of the user), a bundle downloads and uploads back (keep both)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Dialog, Page, WebSocketRoute, expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced, run_async

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]
CONFIG = paced(0) + 'approval = "never"\n'


def accept_dialogs(page: Page) -> list[str]:
    """Every question the page asks (`window.confirm`) is answered yes; the list of them."""
    questions: list[str] = []

    def answer(dialog: Dialog) -> None:
        questions.append(dialog.message)
        dialog.accept()

    page.on("dialog", answer)
    return questions


def test_history_panel_undo_rewind_with_files_and_bundles(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, tmp_path: Path
) -> None:
    daemon = daemon_factory(CONFIG)
    work = daemon.workdir
    ui = ui_factory(daemon)
    page = ui.page
    questions = accept_dialogs(page)
    ui.login()
    cid = ui.new_conversation()
    ui.send("run: echo one > a.txt")
    ui.wait_idle()
    ui.send("run: echo two > b.txt")
    ui.wait_idle()
    assert (work / "b.txt").exists()

    page.click("#history-open")
    expect(page.locator("#history-tree .history-current")).to_have_count(1)
    page.click("#history-undo")
    expect(page.locator(".history-status")).to_contain_text("Undone: b.txt")
    assert not (work / "b.txt").exists() and (work / "a.txt").read_text() == "one\n"

    # Restart from the first message, restoring files; the user changed a.txt since.
    (work / "a.txt").write_text("my edit\n")
    first = page.locator(".item[data-type='user_message']").first
    first.hover()
    first.locator(".act-restart").click()
    page.wait_for_function("(old) => location.hash.slice(1) !== old", arg=cid)
    expect(page.locator("#composer-text")).to_have_value("run: echo one > a.txt")
    assert not (work / "a.txt").exists()
    assert "Also restore the files" in questions[0] and "a.txt" in questions[0]
    assert "Changed since the agent wrote them: a.txt" in questions[1]

    # The tree: the original and its rewind; a click opens the original.
    if page.locator("#history-panel").is_hidden():
        page.click("#history-open")
    tree = page.locator("#history-tree")
    expect(tree.locator("li[data-kind='rewind'] .history-current")).to_have_count(1)
    tree.locator(f"a[data-conversation-id='{cid}']").click()
    page.wait_for_function("(id) => location.hash.slice(1) === id", arg=cid)
    expect(tree.locator(".history-current")).to_have_count(1)
    expect(page.locator("#history-import-cwd")).to_have_value(str(work))

    # Download the bundle, upload it back: already here, so keep both.
    with page.expect_download() as download:
        page.click("#history-export")
    bundle = tmp_path / "bundle.tar"
    download.value.save_as(bundle)
    assert bundle.stat().st_size > 0
    page.set_input_files("#history-import-file", str(bundle))
    page.wait_for_function("(id) => location.hash.slice(1) !== id", arg=cid)
    assert "Keep both" in questions[-1]
    # Into the directory the panel showed (the open conversation's), never the bundle's own.
    expect(page.locator(".history-status")).to_contain_text(f"Imported, working in {work}")
    expect(page.locator("#conv-list li")).to_have_count(3)  # original, rewind, the copy
    # The 409 of the first upload is the expected "already here" answer the browser logs.
    errors = [e for e in ui.console_errors if "409 (Conflict)" not in e]
    assert not errors, errors


async def _delete(daemon: Daemon, cid: str) -> None:
    client = await daemon.client("other")
    try:
        await client.request("conversation/delete", {"conversationId": cid})
    finally:
        await client.close()


def test_restart_in_a_fork_says_which_turns_it_could_not_restore(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    """A fork whose parent was deleted: Restart from a message it copied restores the fork's own
    turn's files and says the parent's turn could not be (`missingTurnIds`)."""
    daemon = daemon_factory(CONFIG)
    work = daemon.workdir
    ui = ui_factory(daemon)
    page = ui.page
    page.on("dialog", lambda dialog: dialog.accept())
    ui.login()
    parent = ui.new_conversation()
    ui.send("run: echo one > a.txt")
    ui.wait_idle()
    users = page.locator(".item[data-type='user_message']")
    users.first.hover()
    users.first.locator(".act-fork").click()
    page.wait_for_function("(old) => location.hash.slice(1) !== old", arg=parent)
    fork = str(page.evaluate("() => location.hash.slice(1)"))
    expect(users).to_have_count(1)
    ui.send("run: echo three > c.txt")
    ui.wait_idle()
    assert (work / "c.txt").exists()
    run_async(lambda: _delete(daemon, parent))

    users.first.hover()
    users.first.locator(".act-restart").click()
    page.wait_for_function("(old) => location.hash.slice(1) !== old", arg=fork)
    expect(page.locator("#errors .error[data-kind='info']")).to_contain_text(
        "1 turn could not be restored"
    )
    assert (work / "a.txt").exists() and not (work / "c.txt").exists()
    assert not ui.console_errors


def test_a_slow_history_answer_never_draws_over_the_conversation_opened_after_it(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    """The panel's tree comes in two requests; opening another conversation while they are on
    their way must not end with the panel showing the previous conversation's tree (nor an empty
    import directory: a redraw while the state is still coming keeps the last one)."""
    daemon = daemon_factory(CONFIG)
    ui = ui_factory(daemon)
    page = ui.page
    holding: list[bool] = []
    held_ids: set[object] = set()
    held: list[str] = []
    pages: list[WebSocketRoute] = []

    def hold_trees(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()
        pages.append(ws)

        def from_page(message: str | bytes) -> None:
            if holding and isinstance(message, str):
                frame = json.loads(message)
                if isinstance(frame, dict) and frame.get("method") == "conversation/tree":
                    held_ids.add(frame.get("id"))
            server.send(message)

        def from_server(message: str | bytes) -> None:
            frame = json.loads(message) if isinstance(message, str) else None
            if isinstance(frame, dict) and "method" not in frame and frame.get("id") in held_ids:
                held.append(str(message))  # the daemon is "slow" to answer this one
                return
            ws.send(message)

        ws.on_message(from_page)
        server.on_message(from_server)

    page.route_web_socket(re.compile(r".*"), hold_trees)
    ui.login()
    first = ui.new_conversation()
    ui.send("run: echo first")
    ui.wait_idle()
    second = ui.new_conversation()
    ui.send("run: echo second")
    ui.wait_idle()
    page.click("#history-open")
    current = page.locator("#history-tree .history-current")
    expect(current).to_contain_text("echo second")

    holding.append(True)  # the first conversation's tree will be slow
    page.evaluate("(id) => { location.hash = id; }", first)
    expect(page.locator("#conv-title")).to_contain_text("echo first")
    holding.clear()
    page.evaluate("(id) => { location.hash = id; }", second)
    expect(page.locator("#conv-title")).to_contain_text("echo second")
    expect(current).to_contain_text("echo second")
    assert held, "the first conversation's tree was asked for while it opened"

    for message in held:  # the slow answers come now, after the second conversation drew
        pages[-1].send(message)
    held.clear()
    # A later answer on the same socket has come when the model list fills: by then the page
    # had the slow ones too (one socket delivers in order).
    page.click("#change-model")
    expect(page.locator("#model-select option").first).to_be_attached()
    expect(current).to_contain_text("echo second")
    expect(page.locator("#history-import-cwd")).to_have_value(str(daemon.workdir))
