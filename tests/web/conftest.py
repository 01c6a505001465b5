"""Fixtures for the browser UI tests: one headless Debian Chromium per worker for tests/web,
a fresh browser context per test, logged in to a real daemon started by `tests/support`."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Playwright,
    expect,
    sync_playwright,
)

from openvaala_server.api.login_page import write_page
from openvaala_server.client import Client
from tests.support.daemon import Daemon
from tests.support.events import collect_until, new_conversation, tool_started

T = TypeVar("T")

CHROMIUM = os.environ.get("OPENVAALA_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

# expect() waits 5 s by default, whatever the context's timeout: too short on a loaded CI VM.
expect.set_options(timeout=15_000)

# The demo model streams word by word with this pause, so a test can watch a turn happen.
PACED_CONFIG = """
[models.demo]
provider = "demo"
pace_ms = {pace}

[agents.default]
description = "General assistant"
model = "demo"
"""


def paced(pace_ms: int) -> str:
    return PACED_CONFIG.replace("{pace}", str(pace_ms))


def run_async(make: Callable[[], Awaitable[T]], timeout: float = 30) -> T:
    """Run a coroutine (e.g. the Python protocol client) on its own loop in another thread:
    the sync Playwright API owns this thread's event loop."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(asyncio.wait_for(make(), timeout))
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout + 5)
    if "error" in box:
        raise box["error"]
    if "value" not in box:
        raise TimeoutError("the coroutine did not finish")
    return box["value"]  # type: ignore[no-any-return]


# Package scope, not session: while sync Playwright runs, this thread has its event loop, and a
# pytest-asyncio test in the same worker cannot start one. Ending Playwright when tests/web is
# done lets the worker go on to the async tests.
@pytest.fixture(scope="package")
def playwright_instance() -> Iterator[Playwright]:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip("Debian's chromium is not installed")
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="package")
def browser(playwright_instance: Playwright) -> Iterator[Browser]:
    browser = playwright_instance.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    context.set_default_timeout(10_000)
    yield context
    context.close()


class WebUI:
    """A page logged in to a daemon, with the few steps every test needs."""

    def __init__(self, page: Page, daemon: Daemon) -> None:
        self.page = page
        self.daemon = daemon
        self.console_errors: list[str] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda e: self.console_errors.append(str(e)))

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.console_errors.append(message.text)

    @property
    def origin(self) -> str:
        return f"http://{self.daemon.address}"

    @property
    def base(self) -> str:
        """The web app's address (its path is the daemon's own, see docs/security.md), without
        the trailing slash: `f"{ui.base}/#{id}"` opens a conversation."""
        if not self.app_path:
            raise RuntimeError("log in first: the app's path is learnt at login")
        return f"{self.origin}{self.app_path.rstrip('/')}"

    app_path = ""

    def login_url(self) -> str:
        """A one-time sign-in file's address, as `openvaala web` writes it (with a code from
        POST /login/code, token)."""
        answer = httpx.post(
            f"{self.origin}/login/code",
            headers={"Authorization": f"Bearer {self.daemon.token}"},
            timeout=10,
        )
        answer.raise_for_status()
        return write_page(self.daemon.home, self.origin, answer.json()["code"]).as_uri()

    def login(self, fragment: str = "") -> None:
        self.page.goto(self.login_url())
        self.page.wait_for_url("**/s/**")
        self.app_path = urlsplit(self.page.url).path
        if fragment:
            self.page.goto(f"{self.base}/#{fragment}")
        self.wait_online()

    def wait_online(self) -> None:
        self.page.wait_for_selector("body[data-connection='online']")

    def new_conversation(self, cwd: str | None = None) -> str:
        old = self.page.evaluate("() => location.hash.slice(1)")
        self.page.click("#new-conv")
        self.page.fill("#new-cwd", cwd or str(self.daemon.workdir))
        self.page.click("#new-create")
        self.page.wait_for_function(
            "(old) => location.hash.length > 1 && location.hash.slice(1) !== old", arg=old
        )
        self.page.wait_for_selector("#composer-text:not([disabled])")
        return str(self.page.evaluate("() => location.hash.slice(1)"))

    def send(self, text: str) -> None:
        """Send and wait until the daemon accepted it (the composer empties on its answer).

        By then a turn it started is already shown as running (the daemon announces a turn
        before answering), so a following `wait_idle()` cannot mistake "not started yet" for
        "finished".
        """
        self.page.fill("#composer-text", text)
        self.page.click("#send")
        expect(self.page.locator("#composer-text")).to_have_value("")

    def wait_idle(self, timeout: float | None = None) -> None:
        self.page.wait_for_selector("#composer[data-running='false']", timeout=timeout)

    def items(self, selector: str = ".item") -> list[str]:
        return [str(t) for t in self.page.locator(f"#transcript {selector}").all_inner_texts()]

    def screenshot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


@pytest.fixture
def ui_factory(context: BrowserContext) -> Callable[[Daemon], WebUI]:
    def make(daemon: Daemon) -> WebUI:
        return WebUI(context.new_page(), daemon)

    return make


def header_action(page: Page, selector: str) -> None:
    """Click one of the conversation header's actions, from its menu when the header is too
    narrow to show them (header_menu.js)."""
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    toggle = page.locator("#actions-menu")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    page.locator(selector).click()


def crash_in_a_shell(daemon: Daemon) -> str:
    """A conversation whose turn runs `sleep 30` in the shell; then the daemon is killed and
    started again, so the turn is one a crash cut. Returns the conversation's id."""

    async def start_shell() -> str:
        client: Client = await daemon.client(reconnect=False)
        try:
            cid = await new_conversation(client, str(daemon.workdir))
            await client.request(
                "input/send", {"conversationId": cid, "text": "run: sleep 30", "mode": "queue"}
            )
            await collect_until(client, tool_started)
            return cid
        finally:
            await client.close()

    cid = run_async(start_shell)
    daemon.kill()
    daemon.start()
    return cid
