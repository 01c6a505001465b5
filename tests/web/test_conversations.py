"""Conversation-level actions in the browser: Restart from here, Fork, Compact context (and its
disabled state), rename, archive, delete, search, and long conversations paging in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import expect

from openvaala_server.client import Client
from tests.e2e.test_paging_at_scale_e2e import write_conversation
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced, run_async

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]
ITEMS = 1_000  # a user message and an answer per turn: "message 0", REPLY, "message 2"…
LAST_MESSAGE = f"message {ITEMS - 2}"
REPLY = "reply {}: try `run: ls`"
BUDGET = 300  # transcript.js ELEMENT_BUDGET


def read_items(daemon: Daemon, cid: str) -> list[dict[str, Any]]:
    async def go() -> list[Any]:
        client: Client = await daemon.client()
        try:
            result = await client.request("conversation/read", {"conversationId": cid})
            return list(result["items"])
        finally:
            await client.close()

    return run_async(go)


def test_restart_from_here_and_fork(daemon_factory: DaemonFactory, ui_factory: UIFactory) -> None:
    daemon = daemon_factory(paced(0))
    ui = ui_factory(daemon)
    ui.login()
    cid = ui.new_conversation()
    page = ui.page
    ui.send("first message")
    ui.wait_idle()
    ui.send("second message")
    ui.wait_idle()
    users = page.locator(".item[data-type='user_message']")

    # Restart from here: a new conversation up to just before that message, which is back in
    # the composer; the original stays as it was.
    second = users.nth(1)
    second.hover()
    second.locator(".act-restart").click()
    page.wait_for_function("(old) => location.hash.slice(1) !== old", arg=cid)
    rewound = str(page.evaluate("() => location.hash.slice(1)"))
    expect(page.locator("#composer-text")).to_have_value("second message")
    expect(users).to_have_count(1)
    expect(users.first.locator(".text")).to_have_text("first message")
    expect(page.locator(".item[data-type='agent_message']")).to_have_count(1)
    expect(page.locator(f"#conv-list [data-conversation-id='{rewound}']")).to_have_count(1)
    ui.screenshot("restarted")
    page.click("#send")  # sent again, in the new conversation
    expect(users).to_have_count(2)
    ui.wait_idle()
    assert len([i for i in read_items(daemon, cid) if i["type"] == "user_message"]) == 2

    # Fork from the first message of the original: a copy up to (and with) that message.
    page.goto(f"{ui.base}/#{cid}")
    ui.wait_online()
    expect(users).to_have_count(2)
    first = users.first
    first.hover()
    first.locator(".act-fork").click()
    page.wait_for_function("(old) => location.hash.slice(1) !== old", arg=cid)
    forked = str(page.evaluate("() => location.hash.slice(1)"))
    assert forked not in (cid, rewound)
    expect(users).to_have_count(1)
    expect(users.first.locator(".text")).to_have_text("first message")
    expect(page.locator("#composer-text")).to_have_value("")
    assert not ui.console_errors


def test_compact_context(daemon_factory: DaemonFactory, ui_factory: UIFactory) -> None:
    daemon = daemon_factory(paced(40))
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    compact = page.locator("#compact")
    ui.send("first message")
    # Disabled, saying why, while a turn runs.
    expect(page.locator("#composer")).to_have_attribute("data-running", "true")
    expect(compact).to_be_disabled()
    expect(compact).to_have_attribute("title", "Compact context: not now, a turn is running")
    ui.wait_idle()
    expect(compact).to_be_enabled()
    ui.send("second message")
    ui.wait_idle()

    compact.click()
    marker = page.locator(".item[data-type='summary']")
    expect(marker).to_have_count(1)
    expect(marker.locator(".marker-line")).to_contain_text("Context compacted")
    expect(marker.locator(".marker-reason")).to_contain_text("by hand")
    # The summary the model now sees is one click away.
    text = marker.locator(".summary-text")
    expect(text).to_be_hidden()
    marker.locator("summary").click()
    expect(text).to_be_visible()
    expect(text).not_to_be_empty()
    # The earlier messages stay on screen, above the marker.
    expect(page.locator(".item[data-type='user_message']")).to_have_count(2)
    expect(compact).to_be_enabled()
    ui.screenshot("compacted")
    assert not ui.console_errors


def test_rename_archive_search_delete(daemon_factory: DaemonFactory, ui_factory: UIFactory) -> None:
    daemon = daemon_factory(paced(0))
    ui = ui_factory(daemon)
    ui.login()
    page = ui.page
    first = ui.new_conversation()
    ui.send("apples and pears")
    ui.wait_idle()
    second = ui.new_conversation()
    # The working directory offered is the most recent conversation's.
    ui.send("bananas")
    ui.wait_idle()
    rows = page.locator("#conv-list li.conv")
    expect(rows).to_have_count(2)
    # Newest first.
    expect(rows.first).to_have_attribute("data-conversation-id", second)

    page.click("#rename")
    page.fill("#rename-input", "Fruit salad")
    page.click("#rename-form button[type='submit']")
    expect(page.locator("#conv-title")).to_have_text("Fruit salad")
    expect(page.locator(f"[data-conversation-id='{second}'] .conv-title")).to_have_text(
        "Fruit salad"
    )

    page.fill("#search", "apples")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-conversation-id", first)
    page.fill("#search", "")
    expect(rows).to_have_count(2)

    page.click("#archive")
    expect(rows).to_have_count(1)
    expect(page.locator("#archive")).to_have_text("Unarchive")
    page.check("#show-archived")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-conversation-id", second)
    page.uncheck("#show-archived")

    page.locator(f"[data-conversation-id='{first}'] .conv-open").click()
    expect(page.locator("#conv-title")).to_have_text("apples and pears")
    page.click("#delete")
    expect(page.locator("#delete")).to_have_text("Really delete?")
    page.click("#delete")
    expect(rows).to_have_count(0)
    expect(page.locator("#transcript")).to_contain_text("deleted")
    ui.screenshot("sidebar")


def test_new_conversation_defaults_to_the_recent_cwd_and_reports_errors(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(paced(0))
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    ui.send("hello")
    ui.wait_idle()
    page = ui.page
    page.reload()
    ui.wait_online()
    # A reload reopens the conversation named in the address.
    expect(page.locator(".item[data-type='user_message'] .text")).to_have_text("hello")
    page.click("#new-conv")
    expect(page.locator("#new-cwd")).to_have_value(str(daemon.workdir))
    page.fill("#new-cwd", "/no/such/dir")
    page.click("#new-create")
    expect(page.locator("#new-error")).to_contain_text("does not exist")


def test_a_1000_item_conversation_opens_pages_in_and_prunes(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    # Written with the store's own writer before the daemon starts: 500 turns run through the
    # daemon took over a minute on a loaded machine, and paging in is what this test is about.
    daemon = daemon_factory(paced(0), start=False)
    cid, _ = run_async(
        lambda: write_conversation(daemon.home, daemon.workdir, ITEMS, reply=REPLY.format),
        timeout=60,
    )
    daemon.start()
    ui = ui_factory(daemon)
    ui.login(cid)
    page = ui.page
    transcript = page.locator("#transcript")
    items = page.locator("#transcript .item")
    texts = page.locator(".item[data-type='user_message'] .text")
    expect(texts.last).to_have_text(LAST_MESSAGE)
    expect(items).to_have_count(100)  # the last page only
    expect(page.locator("#transcript .load-more")).to_be_visible()

    # The top comes into view: the previous page is read in above, and what the user looked
    # at stays where it was on the screen.
    first_id = items.first.get_attribute("data-item-id")
    was_first = page.locator(f"#transcript [data-item-id='{first_id}']")
    transcript.evaluate("el => { el.scrollTop = 0; }")
    before = was_first.bounding_box()
    expect(items).to_have_count(200)
    after = was_first.bounding_box()
    assert before and after and abs(after["y"] - before["y"]) < 2

    # Scroll up to the very first message: pages of 100 are read in as the top comes into
    # view; past the budget the newest elements are dropped, so the page never holds more.
    # Each scroll waits for the page it brings (the first element changes), however slow the
    # machine: a fixed number of short waits ran out under load.
    most = 0
    for _ in range(ITEMS // 100):
        first_id = items.first.get_attribute("data-item-id")
        transcript.evaluate("el => { el.scrollTop = 0; }")
        if texts.first.inner_text() == "message 0":
            break
        expect(items.first).not_to_have_attribute("data-item-id", str(first_id))
        most = max(most, items.count())
    expect(texts.first).to_have_text("message 0")
    # That last page may have been drawn after the scroll (the view kept in place below it): the
    # user scrolls up once more to read the very beginning.
    transcript.evaluate("el => { el.scrollTop = 0; }")
    # Replies drawn while scrolling up get their Markdown once near the screen: the first is.
    first_reply = page.locator("#transcript .item[data-type='agent_message']").first
    expect(first_reply.locator(".markdown code").first).to_have_text("run: ls")
    expect(page.locator("#transcript .load-more")).to_be_hidden()
    assert most <= BUDGET
    expect(page.locator("#transcript .load-newer")).to_be_visible()

    # While the user reads the beginning, the view stays there (no jump as pages come in).
    top = texts.first.bounding_box()
    page.wait_for_timeout(300)
    assert texts.first.bounding_box() == top

    # Back down to the end: the newest items are drawn again (from memory), the oldest dropped.
    newer = page.locator("#transcript .load-newer")
    for _ in range(ITEMS // 100):
        last_id = items.last.get_attribute("data-item-id")
        transcript.evaluate("el => { el.scrollTop = el.scrollHeight; }")
        if newer.is_hidden():
            break
        expect(items.last).not_to_have_attribute("data-item-id", str(last_id))
        most = max(most, items.count())
    expect(newer).to_be_hidden()
    expect(texts.last).to_have_text(LAST_MESSAGE)
    assert most <= BUDGET

    # A new turn at the end still appears live, at the bottom.
    transcript.evaluate("el => { el.scrollTop = el.scrollHeight; }")
    ui.send("one more")
    expect(texts.last).to_have_text("one more")
    ui.wait_idle()
    assert items.count() <= BUDGET
    assert not ui.console_errors
    ui.screenshot("long-conversation")
