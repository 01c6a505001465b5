"""The toolbox in Chromium against a real daemon: the agent's plan in a panel above the transcript
(live, and from the snapshot after a reload), an apply_patch result as a diff with added and
removed lines styled, and the MCP servers panel (a real SDK server ready, one that cannot run)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import expect

from tests.fakes.providers import FakeProvider
from tests.support.daemon import Daemon
from tests.support.toolbox import ORIGINAL, plan_and_patch, toolbox_config
from tests.web.conftest import WebUI

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


@pytest.mark.timeout(180)
def test_plan_diff_and_mcp_panel(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, fake: FakeProvider
) -> None:
    daemon = daemon_factory(toolbox_config(fake))
    (daemon.workdir / "greet.py").write_text(ORIGINAL)
    plan_and_patch(fake)
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    expect(page.locator("#plan")).to_be_hidden()
    ui.send("fix greet")

    plan = page.locator("#plan")
    expect(plan).to_be_visible(timeout=90_000)
    expect(plan.locator(".plan-count")).to_have_text("1/3")
    expect(plan.locator(".plan-explanation")).to_have_text("Small fix")
    steps = plan.locator(".plan-step")
    expect(steps).to_have_count(3)
    expect(steps.nth(0)).to_have_attribute("data-status", "completed")
    expect(steps.nth(1)).to_have_attribute("data-status", "in_progress")
    expect(steps.nth(1).locator(".plan-text")).to_have_text("Patch greet.py")
    ui.wait_idle(timeout=60_000)

    diff = page.locator(".tool-result .diff")
    expect(diff).to_have_count(1)
    expect(diff.locator(".diff-name")).to_contain_text("greet.py")
    expect(diff.locator(".diff-add")).to_have_text("+    return 'hello'\n")
    expect(diff.locator(".diff-del")).to_have_text("-    return 'hi'\n")
    added = diff.locator(".diff-add").evaluate("e => getComputedStyle(e).backgroundColor")
    removed = diff.locator(".diff-del").evaluate("e => getComputedStyle(e).backgroundColor")
    assert added != removed and "0, 0, 0, 0" not in added  # styled, and differently
    ui.screenshot("toolbox")

    # A page opened later draws the plan from the snapshot.
    page.reload()
    ui.wait_online()
    expect(page.locator("#plan .plan-step")).to_have_count(3)

    page.click("#mcp-open")
    servers = page.locator("#mcp-panel .mcp-server")
    expect(servers).to_have_count(2)
    ready = page.locator("#mcp-panel .mcp-server[data-name='t']")
    expect(ready).to_have_attribute("data-status", "ready")
    expect(ready).to_contain_text("echo")
    failed = page.locator("#mcp-panel .mcp-server[data-name='gone']")
    expect(failed).to_have_attribute("data-status", "failed")
    expect(failed).to_contain_text("cannot run 'openvaala-no-such-mcp-server'")
    assert not ui.console_errors
