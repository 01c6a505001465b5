"""The composer while a turn runs: steer / queue / jump, waiting messages edited, withdrawn,
handed to the turn and made to jump; Stop; the context meter."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def test_waiting_messages_can_be_edited_withdrawn_steered_and_jumped(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    # Everything up to the jump happens while "first" is answered: 37 words x 300 ms is ~11 s
    # for ~20 browser actions (~2 s on one idle core). The last answer takes as long again.
    daemon = daemon_factory(paced(300))
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    ui.send("first")
    expect(page.locator("#composer")).to_have_attribute("data-running", "true")
    expect(page.locator("#send-mode")).to_be_visible()

    page.select_option("#send-mode", "queue")
    ui.send("second")
    row = page.locator("#inbox li.waiting").first
    expect(row).to_have_attribute("data-mode", "queue")
    expect(row.locator(".waiting-text")).to_have_text("second")

    row.locator(".w-edit").click()
    page.fill("#inbox .w-edit-text", "second edited")
    page.click("#inbox .w-save")
    expect(page.locator("#inbox .waiting-text")).to_have_text(["second edited"])

    page.select_option("#send-mode", "steer")
    ui.send("third")
    expect(page.locator("#inbox li.waiting")).to_have_count(2)
    third = page.locator("#inbox li.waiting", has_text="third")
    expect(third).to_have_attribute("data-mode", "steer")
    ui.screenshot("waiting-messages")  # while they wait: the pace above leaves room for it
    third.locator(".w-withdraw").click()
    expect(page.locator("#composer-text")).to_have_value("third")
    expect(page.locator("#inbox li.waiting")).to_have_count(1)
    page.fill("#composer-text", "")

    page.locator("#inbox li.waiting", has_text="second edited").locator(".w-steer").click()
    expect(page.locator("#inbox li.waiting")).to_have_attribute("data-mode", "steer")

    page.select_option("#send-mode", "queue")
    ui.send("fourth")
    page.locator("#inbox li.waiting", has_text="fourth").locator(".w-jump").click()

    # "first" is cut short; "fourth" jumps ahead, then the steer input gets its turn.
    expect(page.locator(".item[data-type='notice']")).to_contain_text("Interrupted")
    users = page.locator(".item[data-type='user_message'] .text")
    expect(users).to_have_text(["first", "fourth", "second edited"], timeout=20_000)
    ui.wait_idle(timeout=30_000)  # the answer alone takes ~11 s at this pace
    expect(page.locator("#inbox li.waiting")).to_have_count(0)
    expect(page.locator(".item[data-type='agent_message']").first).to_have_attribute(
        "data-status", "interrupted"
    )
    expect(page.locator(".item[data-type='agent_message'] .badge-interrupted")).to_have_count(1)


def test_stop_interrupts_the_turn(daemon_factory: DaemonFactory, ui_factory: UIFactory) -> None:
    daemon = daemon_factory(paced(100))
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    ui.send("please stop me")
    expect(
        page.locator(".item[data-type='agent_message'][data-status='in_progress']")
    ).to_have_count(1)
    expect(page.locator("#compact")).to_be_disabled()
    assert "a turn is running" in (page.locator("#compact").get_attribute("title") or "")
    page.click("#stop")
    ui.wait_idle()
    expect(page.locator(".item[data-type='notice']")).to_have_text("Interrupted")
    agent = page.locator(".item[data-type='agent_message']")
    expect(agent).to_have_attribute("data-status", "interrupted")
    expect(page.locator("#stop")).to_be_hidden()
    ui.screenshot("stopped")


def test_context_meter_says_estimated_then_reported(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(paced(0))
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    meter = page.locator("#meter")
    expect(meter).to_be_visible()
    expect(meter).to_have_attribute("data-source", "estimated")
    expect(page.locator("#meter-source")).to_have_text("estimated")
    expect(page.locator("#meter-label")).to_contain_text("/ 32k")
    assert "estimated" in (meter.get_attribute("title") or "")
    ui.send("count my tokens")
    ui.wait_idle()
    expect(meter).to_have_attribute("data-source", "reported")
    expect(page.locator("#meter-source")).to_have_text("reported")
    expect(meter).to_have_attribute("data-level", "low")
    # Compact is offered when nothing runs, with a reason when it is refused.
    expect(page.locator("#compact")).to_be_enabled()
