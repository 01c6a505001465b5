"""Jump to start in a 5,000-item conversation: the daemon's history is read in big pages and the
first message is shown, with the transcript's elements still bounded; scrolling down from there
draws what follows. (How long it takes: bench/web_jump.py.)"""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.server.test_paging_at_scale_e2e import write_conversation
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, header_action, run_async

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]
ITEMS = 5_000


def test_jump_to_start_of_a_5000_item_conversation(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(start=False)
    cid, _ = run_async(lambda: write_conversation(daemon.home, daemon.workdir, ITEMS), timeout=60)
    daemon.start()
    ui = ui_factory(daemon)
    ui.login(cid)
    page = ui.page
    last = page.locator("#transcript .item", has_text=f"reply {ITEMS - 1}")
    expect(last).to_be_visible()
    header_action(page, "#jump-start")
    first = page.locator("#transcript .item", has_text="message 0")
    expect(first.first).to_be_in_viewport()
    expect(page.locator("#announce")).to_have_text("At the start of the conversation.")
    assert page.locator("#transcript .item").count() <= 300
    expect(page.locator("#transcript .item").first.locator(".text")).to_have_text("message 0")
    # Scrolling down from the start draws the following items.
    page.locator("#transcript").evaluate("el => { el.scrollTop = el.scrollHeight; }")
    expect(page.locator("#transcript .item", has_text="reply 199").first).to_be_attached()
    assert ui.console_errors == []
