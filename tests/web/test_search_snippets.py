"""A search in the conversation list shows, under each title, a few words of the message that
matched with the matched words highlighted; the message's text stays text (markup in it is shown,
never run), and the list stays within a phone's width. Opening a result found by a message far
back opens the conversation at that message."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.e2e.test_paging_at_scale_e2e import write_conversation
from tests.support.daemon import Daemon
from tests.support.index_wait import search_until
from tests.web.conftest import WebUI, run_async

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]
HOSTILE = '<img src=x id="evil" onerror="window.__ran=1"> the zebra crossing'


def _indexed(daemon: Daemon, search: str) -> None:
    async def wait() -> None:
        client = await daemon.client()
        try:
            await search_until(client, search)
        finally:
            await client.close()

    run_async(wait, timeout=90)


def test_search_shows_a_highlighted_snippet_as_text(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(start=False)
    long, _ = run_async(lambda: write_conversation(daemon.home, daemon.workdir, 1000), timeout=60)
    daemon.start()
    ui = ui_factory(daemon)
    ui.login()
    page = ui.page
    ui.new_conversation()
    ui.send(f"{'filler ' * 300}{HOSTILE}{' filler' * 300}")
    ui.wait_idle()
    _indexed(daemon, "zebr")

    page.fill("#search", "zebr")
    snippet = page.locator("#conv-list .conv .conv-snippet").first
    expect(snippet.locator("mark").first).to_have_text("zebra")
    expect(snippet).to_contain_text('onerror="window.__ran=1">')  # shown as the words it is
    expect(page.locator("#conv-list img, #evil")).to_have_count(0)
    assert page.evaluate("() => window.__ran") is None

    # A phone's width: the snippet wraps inside the list (two lines at most), no overflow.
    page.set_viewport_size({"width": 320, "height": 700})
    # The layout's media query reports the change before the next frames' callbacks: a drawer
    # opened earlier would be closed by it (layout.js closes the drawer when the width changes).
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.evaluate("() => document.querySelector('#drawer-open')?.click()")
    expect(snippet).to_be_in_viewport()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 320

    # Clearing the search leaves the plain list (no snippet).
    page.fill("#search", "")
    expect(page.locator("#conv-list .conv")).to_have_count(2)
    expect(page.locator("#conv-list .conv-snippet")).to_have_count(0)

    # A result found by a message far back opens at that message ("200" begins no other number
    # of the 1,000 items, so one message matches).
    page.set_viewport_size({"width": 1400, "height": 900})
    page.fill("#search", "message 200")
    expect(page.locator("#conv-list .conv-snippet mark")).to_have_text(["message", "200"])
    page.locator(f"#conv-list .conv[data-conversation-id='{long}'] .conv-open").click()
    found = page.locator("#transcript .item.is-jumped")
    expect(found.locator(".text")).to_have_text("message 200")
    expect(found).to_be_in_viewport()
    expect(page.locator("#announce")).to_contain_text("At the message the search found.")
    page.fill("#search", "")
    assert ui.console_errors == []
