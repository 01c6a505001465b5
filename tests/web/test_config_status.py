"""In the browser: a config.toml typo made while the page is open is shown, stays shown to a page
opened later, and a fixed file says what was reloaded. A real daemon, the file rewritten."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def test_a_config_error_is_shown_until_the_file_loads_again(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory()
    good = daemon.config_path.read_text()
    ui = ui_factory(daemon)
    ui.login()
    status = ui.page.locator("#config-status")
    expect(status).to_be_hidden()

    daemon.config_path.write_text(good.replace("[agents.default]", "[agents.default]\nmodle = 1"))
    expect(status).to_be_visible()
    expect(status).to_contain_text("Config error")
    expect(status).to_contain_text("agents.default.modle: unknown key; did you mean `model`?")
    expect(status).to_have_attribute("data-state", "error")

    later = ui_factory(daemon)  # opened while the file is broken
    later.login()
    expect(later.page.locator("#config-status")).to_contain_text("agents.default.modle")

    daemon.config_path.write_text(good + '\n[models.second]\nprovider = "demo"\n')
    expect(status).to_contain_text("models changed")
    expect(status).to_have_attribute("data-state", "ok")
    assert ui.console_errors == [] and later.console_errors == []
