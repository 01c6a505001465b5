"""A file too large for the checkpoints in the browser, against a real daemon: Restart from here
asks with a note that it will be left as it is, and says so afterwards; the History panel's undo
says so too."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI
from tests.web.test_history import CONFIG, accept_dialogs

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]
LEFT = "data.db was too large to keep in a checkpoint"


def test_undo_and_restart_name_the_file_too_large_to_keep(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(CONFIG)
    work = daemon.workdir
    ui = ui_factory(daemon)
    page = ui.page
    questions = accept_dialogs(page)
    ui.login()
    cid = ui.new_conversation()
    for command in (
        "echo one > a.txt",
        "head -c 11000000 /dev/zero > data.db",
        "head -c 12000000 /dev/zero > data.db",
    ):
        ui.send(f"run: {command}")
        ui.wait_idle()
    assert (work / "data.db").stat().st_size == 12_000_000

    page.click("#history-open")
    page.click("#history-undo")  # the last turn: only the large file
    expect(page.locator(".history-status")).to_contain_text("nothing was put back on disk")
    expect(page.locator(".history-status")).to_contain_text(LEFT)

    first = page.locator(".item[data-type='user_message']").first
    first.hover()
    first.locator(".act-restart").click()
    page.wait_for_function("(old) => location.hash.slice(1) !== old", arg=cid)
    assert "a.txt" in questions[0] and LEFT in questions[0], questions
    expect(page.locator("#errors .error[data-kind='info']")).to_contain_text(LEFT)
    assert not (work / "a.txt").exists() and (work / "data.db").exists()
    assert not ui.console_errors
