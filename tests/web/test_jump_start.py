"""Jump to start, or to a date, in a 5,000-item conversation: the daemon's history is read in
big pages and the first message (or the day's first) is shown, with the transcript's elements
still bounded; scrolling down from there draws what follows. (How long: bench/web_jump.py.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import expect

from openvaala_server.domain import records as r
from openvaala_server.domain.ids import new_id
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.e2e.test_paging_at_scale_e2e import write_conversation
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
    expect(page.locator("#announce")).to_contain_text("At the start of the conversation.")
    assert page.locator("#transcript .item").count() <= 300
    expect(page.locator("#transcript .item").first.locator(".text")).to_have_text("message 0")
    # Scrolling down from the start draws the following items.
    page.locator("#transcript").evaluate("el => { el.scrollTop = el.scrollHeight; }")
    expect(page.locator("#transcript .item", has_text="reply 199").first).to_be_attached()
    assert ui.console_errors == []


async def _dated_conversation(home: Path, cwd: Path, count: int) -> str:
    """`count` items (a message and a reply per turn), 200 a day from 1 January 2026."""
    store = await Store.open(DataDir(home))
    cid, sid = new_id(), new_id()
    await store.create_conversation(
        {
            "conversationId": cid,
            "cwd": str(cwd),
            "agent": "default",
            "model": "demo",
            "title": "Dated",
            "titleSource": "user",
            "rootSessionId": sid,
            "forkedFrom": None,
            "formatVersion": r.FORMAT_VERSION,
        }
    )
    prefix = new_id()[:20]
    items: list[r.Item] = []
    for n in range(count):
        item: r.Item = {
            "itemId": f"{prefix}{n:012x}",
            "sessionId": sid,
            "turnId": f"{prefix[::-1]}{n // 2:012x}",
            "createdAt": f"2026-01-{1 + n // 200:02d}T10:00:00.000000Z",
            "status": r.COMPLETED,
        }
        if n % 2 == 0:
            items.append({**item, "type": r.USER_MESSAGE, "text": f"message {n}", "origin": "user"})
        else:
            items.append({**item, "type": r.AGENT_MESSAGE, "text": f"reply {n}"})
    await store.append_items(cid, sid, items)
    await store.close()
    return cid


def test_jump_to_a_date_shows_its_first_message(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(start=False)
    cid = run_async(lambda: _dated_conversation(daemon.home, daemon.workdir, ITEMS), timeout=60)
    daemon.start()
    ui = ui_factory(daemon)
    ui.login(cid)
    page = ui.page
    expect(page.locator("#transcript .item", has_text=f"reply {ITEMS - 1}")).to_be_visible()
    toggle = page.locator("#actions-menu")
    if toggle.is_visible():
        toggle.click()
    page.fill("#jump-date", "2026-01-10")  # day 10: items 1,800 to 1,999
    jumped = page.locator("#transcript .item.is-jumped")
    expect(jumped.locator(".text")).to_have_text("message 1800")
    expect(jumped).to_be_in_viewport()
    expect(page.locator("#announce")).to_contain_text("Jumped to 2026-01-10.")
    assert page.locator("#transcript .item").count() <= 300
    assert ui.console_errors == []
