"""A subagent at rest, followed in the web UI after a cold open: a snapshot carries none of its
items (docs/protocol.md, "Snapshot"), so the page reads its last page when it is shown, and the
rest as for any session (real daemon, real store data, real Chromium)."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.support import subagent_history
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, header_action, run_async

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def test_following_a_closed_subagent_pages_its_history_in(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(start=False)
    written = run_async(lambda: subagent_history.write(daemon.home, daemon.workdir, "demo"))
    daemon.start()
    ui = ui_factory(daemon)
    ui.login(written.cid)
    page = ui.page
    expect(page.locator("#transcript .item", has_text="ROOT-ANSWER")).to_be_visible()

    page.click("#tab-agents")
    row = page.locator("#agents li.agent", has_text="closed one")
    expect(row).to_have_attribute("data-status", "closed")
    row.locator(".agent-follow").click()
    expect(page.locator("#follow-bar")).to_be_visible()
    last = page.locator("#transcript .item", has_text=written.closed_texts[-1])
    expect(last).to_be_in_viewport()
    expect(page.locator("#transcript .item", has_text="ROOT-ANSWER")).to_have_count(0)

    header_action(page, "#jump-start")
    first = page.locator("#transcript .item").first.locator(".text")
    expect(first).to_have_text(written.closed_texts[0])
    assert ui.console_errors == []
