"""What a screen-reader user gets: the polite live region says when a reply is complete,
interrupted or failed and when a subagent reports (not every token), and the conversation
list is one Tab stop walked with the arrow keys (the grid pattern), even at 2,000 rows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from playwright.sync_api import Page, expect

from openvaala_server.domain.ids import new_id
from openvaala_server.store.paths import DataDir
from tests.fakes.providers import FakeProvider
from tests.fakes.script import HttpError, Reply
from tests.support.daemon import Daemon, make_daemon, stop_any_server
from tests.web.conftest import WebUI

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]

# Every change of the live region's words, as a screen reader would be told them.
RECORD_JS = """() => {
  window.__said = [];
  const region = document.querySelector('#announce');
  new MutationObserver(() => {
    if (region.textContent) window.__said.push(region.textContent);
  }).observe(region, {childList: true, characterData: true, subtree: true});
}"""


def _wait_said(page: Page, words: str) -> None:
    page.wait_for_function("(w) => window.__said.some((t) => t.includes(w))", arg=words)


def test_live_region_says_complete_interrupted_failed_and_subagent_report(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, fake_openai: FakeProvider
) -> None:
    fake = fake_openai
    config = (
        '[models.demo]\nprovider = "demo"\npace_ms = 0\n\n'
        + fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "t"\nmodel = "demo"\n'
    )
    daemon = daemon_factory(config)
    ui = ui_factory(daemon)
    ui.login()
    page = ui.page
    page.evaluate(RECORD_JS)
    ui.new_conversation()

    ui.send("hello there")
    _wait_said(page, "The reply is complete.")
    # Politely, once per reply: the streamed words themselves are not announced.
    said = page.evaluate("() => window.__said")
    assert not any("hello" in text.lower() for text in said), said

    ui.send("run: sleep 30")
    expect(page.locator("#stop")).to_be_visible()
    page.click("#stop")
    _wait_said(page, "The reply was interrupted.")

    ui.send("spawn: say hello")
    _wait_said(page, "A subagent reported:")

    # A model that answers with an error: the turn fails, and the region says why.
    fake.enqueue(Reply(error=HttpError(400, "the request was malformed")))
    page.click("#new-conv")
    page.fill("#new-cwd", str(daemon.workdir))
    page.select_option("#new-model", "fake")
    page.click("#new-create")
    page.wait_for_selector("#conv-info:has-text('fake')")
    ui.send("this will fail")
    _wait_said(page, "The turn failed")
    assert ui.console_errors == []


ROWS = 2_000


def _write_conversations(home: Path, cwd: Path, count: int) -> None:
    """`count` small conversations written as journals (docs/storage.md): the daemon indexes
    them at start, far faster than creating them one by one through the protocol."""
    data_dir = DataDir(home)
    data_dir.ensure()
    start = datetime.now(UTC) - timedelta(days=1)
    for n in range(count):
        # One second apart: conversation n is the n-th oldest (the list is newest first).
        ts = (start + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        cid, sid = new_id(), new_id()
        directory = data_dir.conversation_dir(cid)
        directory.mkdir()
        meta = {
            "seq": 1,
            "ts": ts,
            "type": "conversation_created",
            "conversationId": cid,
            "cwd": str(cwd),
            "agent": "default",
            "model": "demo",
            "title": f"Conversation {n:04d}",
            "titleSource": "user",
            "rootSessionId": sid,
            "forkedFrom": None,
            "formatVersion": 1,
        }
        item = {"itemId": new_id(), "type": "user_message", "sessionId": sid, "text": f"hi {n}"}
        (directory / "metadata.jsonl").write_bytes(orjson.dumps(meta) + b"\n")
        record = {"seq": 1, "ts": ts, "type": "item", "item": item}
        (directory / f"{sid}.jsonl").write_bytes(orjson.dumps(record) + b"\n")


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """A daemon with ROWS conversations, for the tests of the list at scale."""
    daemon = make_daemon(tmp_path_factory.mktemp("many"))
    _write_conversations(daemon.home, daemon.workdir, ROWS)
    daemon.start()
    yield daemon
    daemon.stop()
    stop_any_server(daemon)


def test_the_list_is_one_tab_stop_walked_with_arrow_keys(
    many: Daemon, ui_factory: UIFactory
) -> None:
    ui = ui_factory(many)
    ui.login()
    page = ui.page
    rows = page.locator("#conv-list [role='row'][data-key]")
    expect(rows.first).to_be_visible()
    # One element of the list in the Tab order, whatever its length.
    tabbable = "els => els.filter((e) => e.tabIndex >= 0).length"
    assert page.locator("#conv-list button, #conv-list a").evaluate_all(tabbable) == 1

    page.focus("#show-archived")
    page.keyboard.press("Tab")
    first = rows.nth(0).locator(".conv-open")
    expect(first).to_be_focused()
    for _ in range(3):
        page.keyboard.press("ArrowDown")
    fourth = rows.nth(3).locator(".conv-open")
    expect(fourth).to_be_focused()
    page.keyboard.press("ArrowUp")
    expect(rows.nth(2).locator(".conv-open")).to_be_focused()

    # Past the last row loaded, the next page comes; the focus walks on into it.
    loaded = int(page.locator("#sidebar").get_attribute("data-loaded") or 0)
    page.keyboard.press("End")
    page.keyboard.press("ArrowDown")
    page.wait_for_function(
        "(n) => Number(document.querySelector('#sidebar').dataset.loaded) > n", arg=loaded
    )
    page.keyboard.press("ArrowDown")
    focused = page.evaluate("() => document.activeElement.closest('[role=row]').dataset.key")
    keys = rows.evaluate_all("els => els.map((e) => e.dataset.key)")
    assert keys.index(focused) >= loaded, (keys.index(focused), loaded)

    # One Tab leaves the list; Shift+Tab comes back to the same row; Enter opens it.
    page.keyboard.press("Tab")
    expect(page.locator("#mcp-open")).to_be_focused()
    page.keyboard.press("Shift+Tab")
    back = page.evaluate("() => document.activeElement.closest('[role=row]').dataset.key")
    assert back == focused
    page.keyboard.press("Enter")
    page.wait_for_function("(id) => location.hash.slice(1) === id", arg=focused)
    assert page.locator("#conv-list button, #conv-list a").evaluate_all(tabbable) == 1
    assert ui.console_errors == []


def test_the_list_keeps_a_bounded_dom_scrolled_to_the_end(
    many: Daemon, ui_factory: UIFactory
) -> None:
    """Scrolled to the end of all 2,000, the list holds a bounded number of rows, the last one
    (the oldest conversation) among them."""
    ui = ui_factory(many)
    ui.login()
    page = ui.page
    sidebar = page.locator("#sidebar")
    # The first page has come (the loop below reads "more?" from it, not from an empty list).
    page.wait_for_function("() => document.querySelector('#sidebar').dataset.more !== undefined")
    while sidebar.get_attribute("data-more") == "true":
        loaded = int(sidebar.get_attribute("data-loaded") or 0)
        page.locator("#conv-list").evaluate("el => { el.scrollTop = el.scrollHeight; }")
        page.wait_for_function(
            "(n) => Number(document.querySelector('#sidebar').dataset.loaded) > n "
            "|| document.querySelector('#sidebar').dataset.more === 'false'",
            arg=loaded,
        )
    expect(sidebar).to_have_attribute("data-loaded", str(ROWS))
    page.locator("#conv-list").evaluate("el => { el.scrollTop = el.scrollHeight; }")
    oldest = page.locator("#conv-list .conv", has_text="Conversation 0000")
    expect(oldest).to_be_in_viewport()
    assert page.locator("#conv-list li").count() <= 210
    assert page.locator("#conv-list *").count() < 3_000
    # A search says how many it found (a status: read out politely), "+" while more pages exist.
    page.fill("#search", "Conversation 001")
    expect(page.locator("#search-count")).to_have_text("10 conversations found")
    page.fill("#search", "Conversation")
    expect(page.locator("#search-count")).to_have_text("100+ conversations found")
    page.fill("#search", "")
    expect(page.locator("#search-count")).to_have_text("")
    # Back at the top, the newest is drawn again.
    page.locator("#conv-list").evaluate("el => { el.scrollTop = 0; }")
    expect(
        page.locator("#conv-list .conv", has_text=f"Conversation {ROWS - 1:04d}")
    ).to_be_in_viewport()
    assert ui.console_errors == []


def test_on_a_phone_the_list_is_one_tab_stop_and_the_opened_conversation_takes_the_focus(
    many: Daemon, ui_factory: UIFactory
) -> None:
    """On a phone the list is in a drawer: the keyboard opens it, walks the list with the arrow
    keys, leaves it with one Tab, and a conversation opened from it takes the focus as the
    drawer closes (the row the focus was on is hidden with it)."""
    ui = ui_factory(many)
    page = ui.page
    page.set_viewport_size({"width": 390, "height": 844})
    ui.login()
    page.keyboard.press("Tab")
    expect(page.locator(".skip-link")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator("#drawer-open")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#search")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator("#show-archived")).to_be_focused()
    page.keyboard.press("Tab")
    rows = page.locator("#conv-list [role='row'][data-key]")
    expect(rows.nth(0).locator(".conv-open")).to_be_focused()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    third = rows.nth(2)
    expect(third.locator(".conv-open")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator("#mcp-open")).to_be_focused()
    page.keyboard.press("Shift+Tab")
    expect(third.locator(".conv-open")).to_be_focused()

    key = third.get_attribute("data-key")
    page.keyboard.press("Enter")
    page.wait_for_function("(id) => location.hash.slice(1) === id", arg=key)
    expect(page.locator("#drawer-open")).to_have_attribute("aria-expanded", "false")
    expect(page.locator("#transcript")).to_be_focused()
    expect(page.locator("#transcript .item[data-type='user_message']")).to_have_count(1)
    # From there the keyboard goes on into the conversation, not back to the top of the page.
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.closest('#main') !== null")
    assert ui.console_errors == []
