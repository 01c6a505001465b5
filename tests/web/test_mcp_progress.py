"""An MCP call's progress in Chromium against a real daemon and a real SDK-built server: each
progress notification shows in the call's output while it runs, then the result replaces it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import expect

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import daemon_config
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


@pytest.mark.timeout(180)
def test_progress_shows_live_in_the_tool_output(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, fake: FakeProvider
) -> None:
    daemon = daemon_factory(daemon_config(fake, extra="startup_timeout_s = 45\n"))
    gate = daemon.workdir / "gate"  # the server's step 2 waits for it: no timing
    fake.enqueue(
        Reply().tool_call("mcp__t__gated_steps", {"count": 3, "gate": str(gate)}),
        Reply().text("done"),
    )
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    ui.send("go")
    output = ui.page.locator(".tool-result .tool-output")
    expect(output).to_contain_text("[progress 1/3] step 1 of 3", timeout=90_000)
    expect(output).not_to_contain_text("[progress 2/3]")
    gate.write_text("go on")
    expect(output).to_have_text("3 steps", timeout=60_000)
    ui.wait_idle(timeout=60_000)
