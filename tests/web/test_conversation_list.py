"""The conversation list: every conversation reachable by scrolling (pages by `nextCursor`),
live (another client's conversation shows without reload), dates, and forks linked to their
origin."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced, run_async

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]

MANY = 250
# A page more is shown, or there is none left (it may have come before the rows were counted).
MORE_ROWS_OR_END = """(shown) =>
  document.querySelectorAll("#conv-list .conv").length !== shown
  || document.querySelector("#sidebar").dataset.more === 'false'"""


async def _many_conversations(daemon: Daemon, count: int) -> str:
    """One conversation with a message and `count - 1` forks of it (forks are saved at once)."""
    client = await daemon.client()
    try:
        created = await client.request("conversation/create", {"cwd": str(daemon.workdir)})
        cid = created["conversation"]["conversationId"]
        await client.request("conversation/rename", {"conversationId": cid, "title": "Origin"})
        await client.request("input/send", {"conversationId": cid, "text": "hello"})
        while True:
            page = await client.request("conversation/list", {"limit": 1})
            if page["conversations"] and page["conversations"][0]["status"] == "idle":
                break
        for _ in range(count - 1):
            await client.request("conversation/fork", {"conversationId": cid})
        return str(cid)
    finally:
        await client.close()


def test_every_conversation_is_reachable_by_scrolling_and_forks_link_their_origin(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(paced(0))
    origin = run_async(lambda: _many_conversations(daemon, MANY), timeout=120)
    ui = ui_factory(daemon)
    ui.login()
    page = ui.page
    rows = page.locator("#conv-list .conv")
    expect(rows).to_have_count(100)  # the first page
    sidebar = page.locator("#sidebar")
    # Each scroll waits for the page it brings, however slow the machine (a fixed number of short
    # waits could run out under load).
    for _ in range(MANY // 100 + 1):
        if sidebar.get_attribute("data-more") == "false":
            break
        shown = rows.count()
        page.locator("#conv-list").evaluate("el => { el.scrollTop = el.scrollHeight; }")
        page.wait_for_function(MORE_ROWS_OR_END, arg=shown)
    expect(sidebar).to_have_attribute("data-more", "false")
    expect(rows).to_have_count(MANY)
    ids = rows.evaluate_all("els => els.map(e => e.dataset.conversationId)")
    assert len(set(ids)) == MANY and origin in ids

    # Dates: every row says when it was last active.
    stamp = rows.first.locator("time")
    assert stamp.get_attribute("datetime")
    assert stamp.inner_text().strip()
    # A fork says so and links to where it came from.
    fork = page.locator("#conv-list .conv.is-fork").first
    expect(fork.locator(".conv-kind")).to_have_text("fork")
    expect(fork.locator(".conv-origin")).to_have_text("forked from Origin")
    fork.locator(".conv-origin").click()
    page.wait_for_function("(id) => location.hash.slice(1) === id", arg=origin)
    expect(page.locator("#conv-title")).to_have_text("Origin")
    assert ui.console_errors == []


async def _start_elsewhere(daemon: Daemon, title: str) -> str:
    client = await daemon.client("other")
    try:
        created = await client.request(
            "conversation/create", {"cwd": str(daemon.workdir), "title": title}
        )
        cid = created["conversation"]["conversationId"]
        await client.request("input/send", {"conversationId": cid, "text": "hi"})
        return str(cid)
    finally:
        await client.close()


async def _change(daemon: Daemon, method: str, params: dict[str, str]) -> None:
    client = await daemon.client("other")
    try:
        await client.request(method, params)
    finally:
        await client.close()


def test_the_list_is_live(daemon_factory: DaemonFactory, ui_factory: UIFactory) -> None:
    daemon = daemon_factory(paced(100))
    ui = ui_factory(daemon)
    ui.login()
    page = ui.page
    expect(page.locator("#conv-list .empty")).to_be_visible()
    # Created, run and renamed by another client: shown at once, no reload, no poll.
    cid = run_async(lambda: _start_elsewhere(daemon, "From elsewhere"))
    row = page.locator(f"#conv-list .conv[data-conversation-id='{cid}']")
    expect(row).to_contain_text("From elsewhere")
    expect(row).to_have_attribute("data-status", "running")
    expect(row).to_have_attribute("data-status", "idle", timeout=20_000)
    rename = {"conversationId": cid, "title": "Renamed"}
    run_async(lambda: _change(daemon, "conversation/rename", rename))
    expect(row).to_contain_text("Renamed")
    run_async(lambda: _change(daemon, "conversation/delete", {"conversationId": cid}))
    expect(row).to_have_count(0)
    assert ui.console_errors == []
