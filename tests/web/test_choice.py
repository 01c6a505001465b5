"""Choosing the agent and the model when creating a conversation, and the model later
(conversation/setModel); the header says which are in use."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[models.quick]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"

[agents.reviewer]
description = "Reviews code"
model = "demo"
"""


def test_pick_agent_and_model_at_creation_and_change_the_model(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(CONFIG)
    ui = ui_factory(daemon)
    ui.login()
    page = ui.page
    page.click("#new-conv")
    page.fill("#new-cwd", str(daemon.workdir))
    expect(page.locator("#new-agent option")).to_have_count(2)
    expect(page.locator("#new-model option")).to_have_count(3)  # the agent's own, and each
    page.select_option("#new-agent", "reviewer")
    page.select_option("#new-model", "quick")
    page.click("#new-create")
    page.wait_for_selector("#composer-text:not([disabled])")
    expect(page.locator("#change-agent")).to_have_text("Agent: reviewer")
    expect(page.locator("#change-model")).to_have_text("Model: quick")
    ui.send("hello")
    ui.wait_idle()

    page.click("#change-model")
    form = page.locator("#model-form")
    expect(form).to_be_visible()
    expect(page.locator("#model-select")).to_be_focused()
    expect(page.locator("#model-select")).to_have_value("quick")
    page.keyboard.press("Escape")  # Escape closes the form, focus goes back to its button
    expect(form).to_be_hidden()
    expect(page.locator("#change-model")).to_be_focused()

    page.click("#change-model")
    page.select_option("#model-select", "demo")
    page.click("#model-use")
    expect(form).to_be_hidden()
    expect(page.locator("#change-model")).to_have_text("Model: demo")
    # The daemon uses it: a reload (a fresh snapshot) says the same.
    page.reload()
    ui.wait_online()
    expect(page.locator("#change-model")).to_have_text("Model: demo")
    expect(page.locator("#change-agent")).to_have_text("Agent: reviewer")
    assert ui.console_errors == []
