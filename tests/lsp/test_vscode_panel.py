"""The VS Code chat panel's webview (editors/vscode/media/chat.js, with the web UI's modules
copied in by scripts/copy-web.js) in headless Chromium, under the HTML and CSP chat_view.js
makes, against the real bridge (`openvaala lsp`) and daemon, with the provider faked at the
wire. VS Code's side of the webview is played by the test: `acquireVsCodeApi` posts to the test,
which relays requests to the bridge and the bridge's notifications back, as chat_view.js does,
and records the diff-editor requests (VS Code itself is in tests/lsp/test_vscode_real.py, which
needs code-server).

A turn streams in rendered (heading, bold, highlighted code with a copy button, reasoning
folded) without the transcript being redrawn per event; an approval shows the write's diff,
opens it in the diff editor, and is accepted (with a steer sent while it waited) and then
rejected; a reload resumes the conversation with its draft."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import shutil
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import ConsoleMessage, Page, async_playwright, expect

from tests.fakes.providers import FakeProvider
from tests.lsp.harness import Recorder, capabilities, plain, start_lsp, stop_lsp
from tests.lsp.scripted_writes import ask_always_config, panel_turns, user_texts_sent
from tests.support.daemon import Daemon

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "editors" / "vscode"
NODE = shutil.which("node")
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"]

# expect() waits 5 s by default: too short on a loaded machine.
expect.set_options(timeout=15_000)

pytestmark = pytest.mark.skipif(
    NODE is None or not Path(CHROMIUM).exists(), reason="node or Debian's chromium is missing"
)

# VS Code's webview API, played by the test: postMessage goes to the test. The state is lost
# by a reload, as VS Code loses a webview view's state when the window is reloaded before its
# periodic save (about a minute after the change): the panel must restore from the extension.
FAKE_API = """
let state = null;
window.acquireVsCodeApi = () => ({
  postMessage: (m) => window.toHost(JSON.stringify(m)),
  getState: () => state,
  setState: (s) => { state = s; },
});
"""


@pytest.fixture(scope="module")
def media() -> Iterator[str]:
    """editors/vscode/media with the web modules copied in, served on loopback (once a module:
    nothing in it changes)."""
    assert NODE is not None
    subprocess.run([NODE, "scripts/copy-web.js"], cwd=EXT, check=True, capture_output=True)
    served = EXT / "media"

    class Handler(http.server.SimpleHTTPRequestHandler):
        extensions_map = {  # noqa: RUF012 (the base class's attribute)
            ".js": "text/javascript",
            ".mjs": "text/javascript",
            ".css": "text/css",
        }

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(served), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


# What VS Code answers the panel's host actions with in this test (chat_view.js's `host`).
HOST_ANSWERS: dict[str, Any] = {
    "file": "src/app.py",
    "selection": {
        "path": "src/app.py",
        "language": "python",
        "text": "x = 1",
        "first": 3,
        "last": 3,
    },
}


class Relay:
    """What chat_view.js does in VS Code: the webview's requests to the bridge, the bridge's
    notifications to the webview; `diffs` records what the diff editor was asked to show."""

    def __init__(self, page: Page, client: Any, rec: Recorder) -> None:
        self.page, self.client, self.rec = page, client, rec
        self.diffs: list[dict[str, Any]] = []
        self.diff_asked = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()
        self.sent = 0
        self.shown: str | None = None
        self.saved: Any = None  # the state the extension keeps for the panel (workspaceState)
        # When set: the next send is answered with an error, once this event is set.
        self.refuse: asyncio.Event | None = None
        # The webview's requests, in order; those of a method in `hold` wait until its event is
        # set (a slow server), and `holding` is set once one arrived.
        self.requests: list[dict[str, Any]] = []
        self.requested = asyncio.Event()
        self.hold: dict[str, asyncio.Event] = {}
        self.holding = asyncio.Event()

    async def to_host(self, raw: str) -> None:
        message = json.loads(raw)
        if message["type"] == "shown":  # which conversation it shows: nothing to answer
            self.shown = message["conversationId"]
            return
        if message["type"] == "state":  # kept, as chat_view.js keeps it in the workspace's state
            self.saved = message["state"]
            return
        self._spawn(self._answer(message))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _answer(self, m: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"type": "response", "id": m["id"]}
        if m["type"] == "request":
            self.requests.append(m)
            self.requested.set()
            if m["method"] in self.hold:
                self.holding.set()
                await self.hold[m["method"]].wait()
        try:
            if m["type"] == "request" and m["method"] == "openvaala/send" and self.refuse:
                refuse, self.refuse = self.refuse, None
                await refuse.wait()
                raise RuntimeError("the daemon is gone")
            if m["type"] == "request":
                result = await self.client.protocol.send_request_async(m["method"], m["params"])
                reply["result"] = plain(result)
            elif m["action"] == "restore":
                reply["result"] = self.saved
            elif m["args"].get("diff"):
                self.diffs.append(m["args"])
                self.diff_asked.set()
                reply["result"] = None
            else:  # the file picker and the editor's selection, as the user would pick them
                reply["result"] = HOST_ANSWERS.get(m["action"])
        except Exception as exc:  # the webview shows it, as chat_view.js passes it on
            # With the error's data (its `kind`), as the language client's ResponseError has it.
            reply["error"] = {"message": str(exc), "data": plain(getattr(exc, "data", None))}
        await self._post(reply)

    async def until_asked(self, method: str, count: int) -> None:
        """Until the page has made `count` requests of `method`."""
        async with asyncio.timeout(30):
            while sum(r["method"] == method for r in self.requests) < count:
                self.requested.clear()
                await self.requested.wait()

    async def _post(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(Exception):  # a page reloading drops it, as VS Code would
            await self.page.evaluate("m => window.postMessage(m, '*')", message)

    async def forward(self) -> None:
        """The bridge's events, MCP servers' states and its connection's, each in order, to
        the page."""
        told, told_state = 0, 0
        while True:
            while told < len(self.rec.mcp_status):
                params = self.rec.mcp_status[told]
                told += 1
                note = {"type": "notification", "method": "$/openvaala/mcpStatus", "params": params}
                await self._post(note)
            while self.sent < len(self.rec.events):
                event = self.rec.events[self.sent]
                self.sent += 1
                note = {"type": "notification", "method": "$/openvaala/event", "params": event}
                await self._post(note)
            while told_state < len(self.rec.connection):
                state = {"state": self.rec.connection[told_state]}
                told_state += 1
                await self._post(
                    {"type": "notification", "method": "$/openvaala/connection", "params": state}
                )
            self.rec.changed.clear()
            await self.rec.changed.wait()


@pytest.fixture(scope="module")
def html(media: str) -> str:
    """The panel's HTML as chat_view.js makes it, for a webview served at `media`."""
    assert NODE is not None
    return subprocess.run(
        [NODE, str(Path(__file__).with_name("vscode_panel_html.js")), str(EXT), media],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@contextlib.asynccontextmanager
async def open_daemon_panel(
    daemon: Daemon, media: str, html: str
) -> AsyncIterator[tuple[Page, Relay]]:
    """The panel's page in Chromium, relayed to a real bridge on `daemon` (as VS Code would)."""
    client, rec, _ = await start_lsp(
        daemon,
        capabilities("visual-studio-code"),
        options={"approvals": "plugin", "progress": False},
    )
    try:
        async with open_panel(client, rec, media, html) as (page, relay):
            yield page, relay
    finally:
        await stop_lsp(client)


@contextlib.asynccontextmanager
async def open_panel(
    client: Any, rec: Recorder, media: str, html: str
) -> AsyncIterator[tuple[Page, Relay]]:
    """The panel's page in Chromium, relayed to the bridge `client`; on leaving, no CSP
    violation nor script error may have happened."""
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await browser.new_page()
        page.set_default_timeout(20_000)
        relay = Relay(page, client, rec)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))

        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                errors.append(message.text)

        page.on("console", on_console)
        await page.expose_function("toHost", relay.to_host)
        await page.add_init_script(FAKE_API)
        # The panel's HTML at the served origin, as VS Code serves it at the webview's.
        await page.route(
            f"{media}/panel.html", lambda r: r.fulfill(body=html, content_type="text/html")
        )
        await page.goto(f"{media}/panel.html")
        forward = asyncio.ensure_future(relay.forward())
        try:
            yield page, relay
            assert errors == []  # no CSP violation, no script error
        finally:
            forward.cancel()
            await browser.close()


@pytest_asyncio.fixture
async def panel(
    daemon_factory: Any, fake_openai: FakeProvider, media: str, html: str
) -> AsyncIterator[tuple[Page, Relay, Daemon]]:
    # A second model, for the model picker.
    config = ask_always_config(fake_openai) + fake_openai.config_toml("other", model="other-model")
    daemon: Daemon = daemon_factory(config=config)
    async with open_daemon_panel(daemon, media, html) as (page, relay):
        yield page, relay, daemon


async def test_panel_streams_rendered_approves_with_diffs_steers_and_resumes(
    panel: tuple[Page, Relay, Daemon], fake_openai: FakeProvider
) -> None:
    page, relay, daemon = panel
    panel_turns(fake_openai)

    # A turn from the composer streams in rendered.
    await page.click("#new")
    await expect(page.locator("#picker")).not_to_have_value("")
    await page.fill("#text", "look around")
    await page.press("#text", "Control+Enter")
    md = page.locator("article.msg.agent .md")
    await expect(md.locator("h1")).to_have_text("Findings")
    await expect(md.locator("strong")).to_have_text("bold")
    await expect(md.locator("code.hljs")).to_contain_text("print")
    await expect(md.locator("button", has_text="Copy")).to_have_count(1)
    reasoning = page.locator("details.reasoning")
    await expect(reasoning).to_contain_text("weighing it")
    assert await reasoning.get_attribute("open") is None  # folded
    await expect(page.locator("#status")).to_contain_text("idle")
    stats = await page.evaluate("window.openvaalaPanel.stats")
    # Drawn whole once (the subscription); every event since changed only its own item.
    assert stats["fullRenders"] == 1 and stats["events"] > 5

    # An approval: the write's diff in the card and in the diff editor; a steer while it waits.
    await page.fill("#text", "write accepted.txt")
    await page.press("#text", "Control+Enter")
    card = page.locator("section.approval").last
    await expect(card.locator("pre.unified")).to_contain_text("+yes")
    await card.locator("button", has_text="Open diff").click()
    await asyncio.wait_for(relay.diff_asked.wait(), 20)
    diff = relay.diffs[0]["diff"]
    assert diff["path"].endswith("accepted.txt") and diff["kind"] == "add"
    assert diff["newText"] == "yes\n"
    await page.fill("#text", "and mention the README")
    await page.click("#steer")
    await expect(page.locator("#text")).to_have_value("")
    await card.get_by_role("button", name="Accept", exact=True).click()
    await expect(page.locator("article.msg.agent").last).to_contain_text("wrote it")
    assert (daemon.workdir / "accepted.txt").read_text() == "yes\n"
    assert "and mention the README" in user_texts_sent(fake_openai)

    # Rejected: nothing written, the card says so.
    await page.fill("#text", "write rejected.txt")
    await page.press("#text", "Control+Enter")
    card = page.locator("section.approval").last
    await expect(card.locator("pre.unified")).to_contain_text("+no")
    await card.get_by_role("button", name="Reject", exact=True).click()
    await expect(card.locator(".outcome")).to_have_text("Rejected")
    await expect(page.locator("article.msg.agent").last).to_contain_text("not written")
    assert not (daemon.workdir / "rejected.txt").exists()

    # The model picker: the root agent's model, and another chosen for it.
    await expect(page.locator("#model")).to_have_value("fake")
    await page.select_option("#model", "other")

    def model_chosen() -> bool:
        return any(
            e["method"] == "session/updated" and e["params"]["session"]["model"] == "other"
            for e in relay.rec.events
        )

    await relay.rec.until(model_chosen)

    # A reload resumes: the same conversation, its transcript and the draft left in the composer
    # (the webview's own state is gone, FAKE_API: the copy the extension keeps brings it back).
    await page.fill("#text", "a draft to keep")
    await page.reload()
    await expect(page.locator("article.msg.agent").first.locator("h1")).to_have_text("Findings")
    await expect(page.locator("#text")).to_have_value("a draft to keep")
    await expect(page.locator("article.msg.agent").last).to_contain_text("not written")
    await expect(page.locator("details.tool")).to_have_count(2)
    await expect(page.locator("details.tool").last.locator("pre.output")).to_contain_text("denied")

    # Context for the composer: a file picked from the workspace, the editor's selection.
    await page.fill("#text", "see ")
    await page.press("#text", "End")
    await page.click("#file")
    await expect(page.locator("#text")).to_have_value("see @src/app.py ")
    await page.click("#selection")
    await expect(page.locator("#text")).to_have_value(
        "see @src/app.py `src/app.py:3-3`\n```python\nx = 1\n```\n"
    )
    await page.fill("#text", "")

    # Fork: a new conversation with the same history, switched to in place.
    original = await page.locator("#picker").input_value()
    await page.click("#fork")
    await expect(page.locator("#picker")).not_to_have_value(original)
    forked = await page.locator("#picker").input_value()
    await expect(page.locator("article.msg.agent").first.locator("h1")).to_have_text("Findings")
    # Rewind to before the first message: a new conversation without it, the text back.
    await page.locator("article.msg.user").first.get_by_role("button", name="Rewind").click()
    await expect(page.locator("#picker")).not_to_have_value(forked)
    await expect(page.locator("#text")).to_have_value("look around")
    await expect(page.locator("article.msg")).to_have_count(0)

    # A send refused (answered only once more was typed): its text comes back before what was
    # typed meanwhile; nothing is lost.
    relay.refuse = refuse = asyncio.Event()
    await page.fill("#text", "the refused message")
    await page.click("#send")
    await expect(page.locator("#text")).to_have_value("")
    await page.fill("#text", "typed meanwhile")
    refuse.set()
    await expect(page.locator("#text")).to_have_value("the refused message\n\ntyped meanwhile")
    await expect(page.locator("#status")).to_contain_text("the daemon is gone")
