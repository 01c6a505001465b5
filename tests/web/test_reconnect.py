"""The socket drops mid-turn: the page says it is offline, reconnects, resubscribes with
`afterSeq`, and the streamed text has no gap and no repeated delta (duplicates dropped by seq)."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import WebSocketRoute, expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced
from tests.web.test_transcript import read_items

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]

LONG = "tell me " + " ".join(f"w{n}" for n in range(40))


def plain(text: str) -> str:
    return " ".join(text.replace("`", "").split())


def test_a_dropped_socket_resumes_without_gap_or_duplicate(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    # The answer (~77 words) must go on well past the reconnect for the samples taken after it
    # (`len(samples) > 3`): at 100 ms a word it streams for ~8 s.
    daemon = daemon_factory(paced(100))
    ui = ui_factory(daemon)
    page = ui.page
    routes: list[tuple[WebSocketRoute, WebSocketRoute]] = []
    duplicated = {"n": 0}

    def route(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()

        def forward(message: str | bytes) -> None:
            ws.send(message)
            # Send some deltas twice: the page must drop the repeats by their seq.
            if isinstance(message, str) and '"item/delta"' in message and duplicated["n"] < 8:
                duplicated["n"] += 1
                ws.send(message)

        server.on_message(forward)
        routes.append((ws, server))

    page.route_web_socket(re.compile(r".*/ws$"), route)
    ui.login()
    cid = ui.new_conversation()
    ui.send(LONG)
    streaming = page.locator(
        ".item[data-type='agent_message'][data-status='in_progress'] .markdown"
    )
    expect(streaming).to_contain_text("w3")  # well into the answer, with duplicates sent

    samples: list[str] = [streaming.inner_text()]
    ws, server = routes[-1]
    server.close()
    ws.close()
    expect(page.locator("#banner")).to_be_visible()
    expect(page.locator("#banner")).to_contain_text("Offline")
    ui.screenshot("offline")
    ui.wait_online()
    assert len(routes) == 2
    # Sample what the page shows while the turn goes on after the resumption.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if page.locator("#composer[data-running='false']").count():
            break
        if streaming.count():
            with contextlib.suppress(PlaywrightError):  # it may complete in between
                samples.append(streaming.inner_text(timeout=500))
        page.wait_for_timeout(40)
    ui.wait_idle()

    final = [i for i in read_items(daemon, cid) if i["type"] == "agent_message"]
    assert len(final) == 1
    expected = plain(final[0]["text"])
    assert len(samples) > 3
    for sample in samples:
        assert expected.startswith(plain(sample)), (sample, expected)
    done = page.locator(".item[data-type='agent_message']")
    expect(done).to_have_count(1)
    assert plain(done.locator(".markdown").inner_text()) == plain(expected)
    body = page.locator("body")
    assert int(body.get_attribute("data-stale") or 0) >= duplicated["n"] >= 1
    assert body.get_attribute("data-gaps") in (None, "0")
    assert body.get_attribute("data-snapshots") == "1"  # resumed by replay, not a new snapshot
    assert int(body.get_attribute("data-replayed") or 0) > 0
    expect(page.locator("#banner")).to_be_hidden()
