"""Conversation-level actions in the browser: Restart from here, Fork, Compact context (and its
disabled state), rename, archive, delete, search, and long conversations paging in."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from openvaala_server.client import Client
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced, run_async

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]
TURNS = 500  # a user message and an answer each: 1,000 items
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


# 500 turns run through the daemon first: over the suite's 60 s on a loaded two-core machine.
@pytest.mark.timeout(180)
def test_a_1000_item_conversation_opens_pages_in_and_prunes(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(paced(0))

    async def fill() -> str:
        client: Client = await daemon.client()
        try:
            result = await client.request("conversation/create", {"cwd": str(daemon.workdir)})
            cid: str = result["conversation"]["conversationId"]
            for n in range(TURNS):  # queued all at once: the daemon runs them one by one
                await client.request(
                    "input/send", {"conversationId": cid, "text": f"message {n}", "mode": "queue"}
                )
            while True:
                [root] = (await client.request("sessions/list", {"conversationId": cid}))[
                    "sessions"
                ]
                if root["status"] == "idle":
                    return cid
                await asyncio.sleep(0.1)
        finally:
            await client.close()

    cid = run_async(fill, timeout=150)
    ui = ui_factory(daemon)
    ui.login(cid)
    page = ui.page
    transcript = page.locator("#transcript")
    items = page.locator("#transcript .item")
    texts = page.locator(".item[data-type='user_message'] .text")
    expect(texts.last).to_have_text(f"message {TURNS - 1}")
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
    most = 0
    for _ in range(40):
        transcript.evaluate("el => { el.scrollTop = 0; }")
        page.wait_for_timeout(150)
        count = items.count()
        most = max(most, count)
        if texts.first.inner_text() == "message 0":
            break
    expect(texts.first).to_have_text("message 0")
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
    for _ in range(40):
        transcript.evaluate("el => { el.scrollTop = el.scrollHeight; }")
        page.wait_for_timeout(150)
        most = max(most, items.count())
        if page.locator("#transcript .load-newer").is_hidden():
            break
    expect(page.locator("#transcript .load-newer")).to_be_hidden()
    expect(texts.last).to_have_text(f"message {TURNS - 1}")
    assert most <= BUDGET

    # A new turn at the end still appears live, at the bottom.
    transcript.evaluate("el => { el.scrollTop = el.scrollHeight; }")
    ui.send("one more")
    expect(texts.last).to_have_text("one more")
    ui.wait_idle()
    assert items.count() <= BUDGET
    assert not ui.console_errors
    ui.screenshot("long-conversation")
