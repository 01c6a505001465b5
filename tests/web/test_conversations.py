"""Conversation-level actions in the browser: Restart from here, Fork and Compact (a graceful
error while the daemon answers not_available), rename, archive, delete, search, paging."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import expect

from openvaala_server.client import Client
from tests.support.daemon import Daemon
from tests.support.events import collect_until, turn_ended
from tests.web.conftest import WebUI, paced, run_async

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def server_methods(daemon: Daemon) -> set[str]:
    async def go() -> set[str]:
        client: Client = await daemon.client()
        try:
            info: dict[str, Any] = await client.request(
                "initialize", {"clientInfo": {"name": "probe"}, "protocolVersion": 1}
            )
            return set(info["capabilities"].get("methods", []))
        finally:
            await client.close()

    return run_async(go)


def test_restart_fork_and_compact(daemon_factory: DaemonFactory, ui_factory: UIFactory) -> None:
    daemon = daemon_factory(paced(0))
    methods = server_methods(daemon)
    ui = ui_factory(daemon)
    ui.login()
    cid = ui.new_conversation()
    page = ui.page
    ui.send("first message")
    ui.wait_idle()
    ui.send("second message")
    ui.wait_idle()
    second = page.locator(".item[data-type='user_message']").nth(1)

    second.hover()
    second.locator(".act-restart").click()
    if "conversation/rewind" in methods:
        page.wait_for_function("(old) => location.hash.slice(1) !== old", arg=cid)
        expect(page.locator("#composer-text")).to_have_value("second message")
        expect(page.locator(".item[data-type='user_message']")).to_have_count(1)
        page.goto(f"{ui.base}/#{cid}")
        ui.wait_online()
    else:
        error = page.locator("#errors .error[data-kind='not_available']")
        expect(error).to_contain_text("Restart from here is not available")
        assert page.evaluate("() => location.hash.slice(1)") == cid  # no fake success
        error.locator(".dismiss").click()

    first = page.locator(".item[data-type='user_message']").first
    first.hover()
    first.locator(".act-fork").click()
    if "conversation/fork" in methods:
        page.wait_for_function("(old) => location.hash.slice(1) !== old", arg=cid)
        expect(page.locator(".item[data-type='user_message']")).to_have_count(1)
        page.goto(f"{ui.base}/#{cid}")
        ui.wait_online()
    else:
        error = page.locator("#errors .error[data-kind='not_available']")
        expect(error).to_contain_text("Fork is not available")
        assert page.evaluate("() => location.hash.slice(1)") == cid
        error.locator(".dismiss").click()

    expect(page.locator("#compact")).to_be_enabled()
    page.click("#compact")
    if "conversation/compact" in methods:
        expect(page.locator(".item[data-type='summary']")).to_have_count(1)
    else:
        expect(page.locator("#errors .error[data-kind='not_available']")).to_contain_text(
            "Compact context is not available"
        )
        expect(page.locator(".item[data-type='summary']")).to_have_count(0)
    ui.screenshot("not-available")


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


def test_long_conversations_page_in_on_scroll(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(paced(0))

    async def fill() -> str:
        client: Client = await daemon.client()
        try:
            result = await client.request("conversation/create", {"cwd": str(daemon.workdir)})
            cid: str = result["conversation"]["conversationId"]
            await client.subscribe(cid)
            for n in range(52):
                await client.request(
                    "input/send", {"conversationId": cid, "text": f"message {n}", "mode": "queue"}
                )
                await collect_until(client, turn_ended())
            return cid
        finally:
            await client.close()

    cid = run_async(fill, timeout=50)
    ui = ui_factory(daemon)
    ui.login(cid)
    page = ui.page
    items = page.locator("#transcript .item")
    expect(items).to_have_count(100)  # the snapshot's last page
    expect(page.locator("#transcript .load-more")).to_be_visible()
    page.locator("#transcript").evaluate("el => { el.scrollTop = 0; }")
    expect(items).to_have_count(104)
    expect(page.locator(".item[data-type='user_message'] .text").first).to_have_text("message 0")
    expect(page.locator("#transcript .load-more")).to_be_hidden()
