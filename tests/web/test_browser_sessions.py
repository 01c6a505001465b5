"""The signed-in browsers, listed and ended from the command line (`openvaala web --sessions`,
`--end ID`) and from the web app's panel; an ended session's open tab is signed out at once
(docs/security.md, "The browser")."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced

DaemonFactory = Callable[..., Daemon]


@pytest.fixture
def two_browsers(browser: Browser) -> Iterator[tuple[BrowserContext, BrowserContext]]:
    first = browser.new_context(user_agent="FirstBrowser/1.0")
    second = browser.new_context(user_agent="SecondBrowser/2.0")
    for context in (first, second):
        context.set_default_timeout(10_000)
    yield first, second
    first.close()
    second.close()


def _listed(daemon: Daemon) -> dict[str, str]:
    """`openvaala web --sessions`: user agent → session id."""
    done = daemon.cli("web", "--sessions")
    assert done.returncode == 0, done.stderr
    rows = re.findall(r"^([0-9a-f]{12})\s.*?(\w+Browser/\d\.\d)$", done.stdout, re.MULTILINE)
    return {agent: sid for sid, agent in rows}


def _signed_out(ui: WebUI) -> None:
    ui.page.wait_for_selector("body[data-connection='unauthorized']")
    expect(ui.page.locator("#banner")).to_contain_text("Signed out")


def test_sessions_are_listed_and_ended_from_the_cli_and_the_web_app(
    daemon_factory: DaemonFactory, two_browsers: tuple[BrowserContext, BrowserContext]
) -> None:
    daemon = daemon_factory(paced(0))
    first = WebUI(two_browsers[0].new_page(), daemon)
    second = WebUI(two_browsers[1].new_page(), daemon)
    first.login()
    second.login()

    listed = _listed(daemon)
    assert set(listed) == {"FirstBrowser/1.0", "SecondBrowser/2.0"}
    # Ended from the command line: that tab is signed out, the other stays.
    ended = daemon.cli("web", "--end", listed["SecondBrowser/2.0"])
    assert ended.returncode == 0, ended.stderr
    _signed_out(second)
    assert set(_listed(daemon)) == {"FirstBrowser/1.0"}
    expect(first.page.locator("body")).to_have_attribute("data-connection", "online")
    unknown = daemon.cli("web", "--end", "0123456789ab")
    assert unknown.returncode == 1 and "no browser session 0123456789ab" in unknown.stderr

    # From the web app: the panel lists both, marks this browser, and ends the other.
    second.login()
    first.page.click("#sessions-open")
    rows = first.page.locator("#sessions-panel .web-session")
    expect(rows).to_have_count(2)
    mine = first.page.locator("#sessions-panel .web-session[data-current='true']")
    expect(mine).to_contain_text("FirstBrowser/1.0")
    expect(mine).to_contain_text("(this browser)")
    expect(mine).to_contain_text("last used")
    other = rows.filter(has_text="SecondBrowser/2.0")
    other.locator(".web-session-end").click()
    _signed_out(second)
    expect(rows).to_have_count(1)
    assert set(_listed(daemon)) == {"FirstBrowser/1.0"}

    # Its own session: this tab signs out.
    mine.locator(".web-session-end").click()
    _signed_out(first)
    assert _listed(daemon) == {}
    assert "No browser is signed in." in daemon.cli("web", "--sessions").stdout


def test_sessions_are_listed_and_ended_with_no_daemon_running(
    daemon_factory: DaemonFactory, two_browsers: tuple[BrowserContext, BrowserContext]
) -> None:
    daemon = daemon_factory(paced(0))
    ui = WebUI(two_browsers[0].new_page(), daemon)
    ui.login()
    daemon.stop()
    listed = _listed(daemon)
    assert set(listed) == {"FirstBrowser/1.0"}
    # A prefix of the id, as with conversation ids.
    ended = daemon.cli("web", "--end", listed["FirstBrowser/1.0"][:5])
    assert ended.returncode == 0, ended.stderr
    assert _listed(daemon) == {}
