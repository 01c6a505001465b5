"""The Agents tab with a real subagent: the demo model's `spawn: <task>` makes the root agent
call spawn_agent; the subagent runs the task (here a long shell command) and reports back to its
parent after each of its turns. The tab lists it under its parent with its status, live; the
user follows it (its transcript, live), interrupts it and messages it."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def test_agents_tab_follows_interrupts_and_messages_a_subagent(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(paced(0))
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    ui.send("spawn: run: sleep 30")

    page.click("#tab-agents")
    expect(page.locator("#agents")).to_be_visible()
    expect(page.locator("#transcript")).to_be_hidden()
    rows = page.locator("#agents li.agent")
    expect(rows).to_have_count(2)
    main, child = rows.nth(0), rows.nth(1)
    expect(main.locator(".agent-name")).to_have_text("default (main)")
    expect(child).to_have_attribute("data-depth", "1")
    expect(child.locator(".agent-title")).to_have_text("run: sleep 30")
    expect(child).to_have_attribute("data-status", "running")
    expect(child.locator(".agent-interrupt")).to_be_enabled()
    expect(page.locator("#agents-count")).to_have_text("(2)")
    ui.screenshot("agents")

    # Follow it: the transcript is the subagent's, live: its task and the command running.
    child.locator(".agent-follow").click()
    expect(page.locator("#transcript")).to_be_visible()
    expect(page.locator("#follow-bar")).to_be_visible()
    expect(page.locator("#follow-label")).to_contain_text("run: sleep 30")
    task = page.locator(".item[data-type='user_message']").first
    expect(task.locator(".who")).to_have_text("From the parent agent")
    expect(task.locator(".text")).to_have_text("run: sleep 30")
    expect(task.locator(".act-restart")).to_have_count(0)  # rewind is for the main agent
    expect(page.locator(".tool-call .tool-args")).to_have_text("sleep 30")
    expect(page.locator(".tool-result .tool-status")).to_have_text("running")
    expect(page.locator("#composer-target")).to_contain_text("To subagent")
    ui.screenshot("following-subagent")

    # Interrupt it from the tab: its row and its transcript say so, live.
    page.click("#tab-agents")
    child.locator(".agent-interrupt").click()
    expect(child).to_have_attribute("data-status", "interrupted")
    expect(child.locator(".agent-interrupt")).to_be_disabled()
    page.click("#tab-transcript")
    expect(page.locator(".tool-result .tool-status")).to_have_text("interrupted")
    expect(page.locator(".item[data-type='notice']")).to_have_text("Interrupted")

    # Message it from the tab: it answers in its own transcript, live.
    page.click("#tab-agents")
    child.locator(".agent-message").click()
    expect(page.locator("#agent-message label")).to_contain_text("run: sleep 30")
    page.fill("#agent-message-text", "what did you find?")
    page.click("#agent-message-send")
    expect(page.locator("#agent-message")).to_be_hidden()
    page.click("#tab-transcript")
    users = page.locator(".item[data-type='user_message'] .text")
    expect(users.last).to_have_text("what did you find?")
    expect(page.locator(".item[data-type='agent_message']").last).to_contain_text(
        "what did you find?"
    )
    ui.wait_idle()

    # What is typed in the composer while following goes to the subagent too.
    ui.send("one more thing")
    expect(users.last).to_have_text("one more thing")

    # The parent got the subagent's reports (interrupted, then answered) and answered them.
    page.click("#follow-back")
    expect(page.locator("#follow-bar")).to_be_hidden()
    reports = page.locator(".item.user-message.origin-subagent")
    expect(reports.nth(1)).to_be_visible()
    assert "one more thing" not in ui.items(".item[data-type='user_message'] .text")
    assert not ui.console_errors
