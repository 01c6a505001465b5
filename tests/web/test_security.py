"""Hostile text from the model or a tool executes nothing; the app runs under the daemon's CSP;
a page from another local origin cannot talk to the daemon."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Dialog, expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]

# Each is the first line of a user message: the demo model answers "You said: “<it>”…" as
# Markdown, so the payload reaches the Markdown renderer as model output.
PAYLOADS = [
    '<img src=x onerror="window.__xss=1;alert(1)">',
    "<script>window.__xss=2;alert(2)</script>",
    '[click me](javascript:window.__xss=3) and <a href="javascript:alert(3)">x</a>',
    '<svg onload="window.__xss=4"><script>window.__xss=5</script></svg>',
    '<iframe srcdoc="<script>parent.__xss=6</script>"></iframe><object data="javascript:0">',
    '<details open ontoggle="window.__xss=7">x</details><math><mtext><img src=x onerror="f()">',
    '![pic](javascript:alert(8)) <a href="data:text/html,<script>alert(8)</script>">d</a>',
]


def test_model_and_tool_output_cannot_run_script(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(paced(0))
    ui = ui_factory(daemon)
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    ui.page.on("dialog", on_dialog)
    ui.login()
    ui.new_conversation()
    page = ui.page
    for n, payload in enumerate(PAYLOADS, start=1):
        ui.send(payload)
        expect(
            page.locator(".item[data-type='agent_message'][data-status='completed']")
        ).to_have_count(n)
        ui.wait_idle()
    # Tool output with markup is shown as text.
    ui.send("run: printf '<img src=x onerror=\"window.__xss=9\"><b>bold</b>'")
    expect(page.locator(".tool-result[class*='tool-done'] .tool-output")).to_contain_text(
        '<img src=x onerror="window.__xss=9"><b>bold</b>'
    )
    ui.wait_idle()
    page.wait_for_timeout(300)  # let any injected handler fire

    assert dialogs == []
    assert page.evaluate("() => window.__xss") is None
    transcript = page.locator("#transcript")
    dangerous = ("script", "iframe", "object", "svg", "math", "[onerror]", "[onload]", "[ontoggle]")
    for selector in dangerous:
        assert transcript.locator(selector).count() == 0, selector
    hrefs = transcript.locator("a").evaluate_all("els => els.map(a => a.getAttribute('href'))")
    assert all(h is None or not h.lower().startswith(("javascript:", "data:")) for h in hrefs)
    assert transcript.locator(".tool-output b").count() == 0
    # Raw HTML the model wrote is shown as the text it is.
    expect(page.locator(".item[data-type='agent_message']").first).to_contain_text(
        'You said: “<img src=x onerror="window.__xss=1;alert(1)">”'
    )
    # The user's own text is shown verbatim, as text.
    users = page.locator(".item[data-type='user_message'] .text").all_inner_texts()
    assert users[: len(PAYLOADS)] == PAYLOADS
    # Clicking the neutered links runs nothing either.
    for link in transcript.locator(".markdown a").all():
        link.click(modifiers=["Alt"])
    page.wait_for_timeout(200)
    assert dialogs == []
    assert page.evaluate("() => window.__xss") is None
    assert [e for e in ui.console_errors if "Content Security Policy" in e] == []
    ui.screenshot("xss")


def test_the_app_loads_only_from_the_daemon(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(paced(0))
    ui = ui_factory(daemon)
    requested: list[str] = []
    ui.page.on("request", lambda r: requested.append(r.url))
    ui.login()
    ui.new_conversation()
    ui.send("hello")
    ui.wait_idle()
    origin = f"http://{daemon.address}/"
    assert requested
    # The sign-in file `openvaala web` writes is the only page from elsewhere (docs/security.md).
    sign_in = (daemon.home / "web-login").as_uri() + "/"
    allowed = (origin, f"ws://{daemon.address}/", "data:", sign_in)
    assert all(u.startswith(allowed) for u in requested), requested
    csp = ui.page.evaluate(
        "async () => (await fetch('static/app.css')).headers.get('content-security-policy')"
    )
    assert "script-src 'self'" in csp
    # No CSP violation (inline script, style or handler) was reported while all that ran.
    assert ui.console_errors == []


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = b"<!doctype html><title>other site</title><p>not the daemon</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def other_site() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_page_from_another_local_port_cannot_reach_the_daemon(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, other_site: str
) -> None:
    daemon = daemon_factory(paced(0))
    ui = ui_factory(daemon)
    ui.login()  # the browser holds the daemon's cookie: it must not help the other page
    page = ui.page
    page.goto(other_site)
    result = page.evaluate(
        """async (daemon) => {
            const out = {};
            try {
                const r = await fetch(`http://${daemon}/`, {credentials: 'include'});
                out.fetch = 'status ' + r.status;
            } catch (e) { out.fetch = 'refused'; }
            try {
                const r = await fetch(`http://${daemon}/`,
                                      {credentials: 'include', mode: 'no-cors'});
                out.opaque = r.type;
            } catch (e) { out.opaque = 'refused'; }
            out.ws = await new Promise((resolve) => {
                const ws = new WebSocket(`ws://${daemon}/ws`);
                ws.onopen = () => {
                    ws.send(JSON.stringify(
                        {jsonrpc: '2.0', id: 1, method: 'initialize', params: {}}));
                };
                ws.onmessage = (e) => resolve('answered: ' + e.data);
                ws.onclose = (e) => resolve('closed ' + e.code);
                setTimeout(() => resolve('timeout'), 5000);
            });
            return out;
        }""",
        daemon.address,
    )
    assert result["fetch"] == "refused"  # no CORS: the page can read nothing
    assert result["opaque"] == "opaque"  # a blind request gets nothing readable either
    assert result["ws"].startswith("closed"), result  # the upgrade was refused (foreign Origin)
