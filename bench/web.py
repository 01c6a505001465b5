"""Web UI speed in Chromium against a real daemon (issue 20).

What it measures (Debian Chromium through Playwright, headless, 1200×800, signed in once with a
one-time login code as `openvaala web` does):
  - app first paint: loading the app's page until the first contentful paint, and until it is
    ready (connected, conversation list drawn);
  - long conversation: opening a conversation of ``--items`` items (half user messages, half
    replies, made through the real protocol with the demo model) by its address, until its last
    item is drawn;
  - scroll to the first item: from the bottom of that conversation, the user keeps pressing
    Home (scrollTop = 0 on each frame) until the very first item is on screen. Earlier items are
    read from the daemon (conversation/read) page by page as they come into reach.
Figures are the median and range of ``--runs`` runs, each in a fresh page.

Goal (issue 20): first paints no slower than before (0.56–0.92 s and 0.44–0.50 s on a loaded
2-core machine), the first of 2,000 items reached in under 2 s (5.2 s before).

Run: ``python bench/web.py [--items 2000] [--runs 3]``. For a baseline of another tree, run this
script from that tree's directory with ``PYTHONPATH`` set to it: the daemon is started with
``python -c``, which imports from the current directory first.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import BenchDaemon
from openvaala_server.api.login_page import write_page
from openvaala_server.client import Client

CHROMIUM = os.environ.get("OPENVAALA_CHROMIUM", "/usr/bin/chromium")


async def make_conversation(daemon: BenchDaemon, items: int) -> str:
    """A conversation of `items` items: user message + reply per turn, one turn after another."""
    client = await Client.connect(daemon.address, daemon.token, client_name="bench")
    try:
        created = await client.request("conversation/create", {"cwd": str(daemon.workdir)})
        cid = str(created["conversation"]["conversationId"])
        await client.subscribe(cid)
        for n in range(items // 2):
            await client.request("input/send", {"conversationId": cid, "text": f"message {n}"})
            while True:
                note = await client.next_notification(timeout=30)
                if note["method"] == "turn/ended":
                    break
        return cid
    finally:
        await client.close()


def login_url(daemon: BenchDaemon) -> str:
    """A one-time sign-in page's address, as `openvaala web` writes it."""
    answer = httpx.post(
        f"http://{daemon.address}/login/code",
        headers={"Authorization": f"Bearer {daemon.token}"},
        timeout=10,
    )
    if answer.status_code == 404:  # a daemon from before the login codes (for a baseline run)
        return f"http://{daemon.address}/?token={daemon.token}"
    answer.raise_for_status()
    return write_page(daemon.home, f"http://{daemon.address}", answer.json()["code"]).as_uri()


def signed_in(pw: Any, daemon: BenchDaemon) -> tuple[Any, str]:
    """A browser context signed in to the daemon (Playwright's sync API) and the app's address."""
    browser = pw.chromium.launch(
        executable_path=CHROMIUM, args=["--no-sandbox", "--headless", "--disable-gpu"]
    )
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    page = context.new_page()
    page.goto(login_url(daemon))
    page.wait_for_url("**/s/**")
    page.wait_for_selector("body[data-connection='online']")
    app = str(page.url).split("#")[0]
    page.close()
    return context, app


def spread(values: list[float]) -> str:
    mid = statistics.median(values)
    return f"median {mid:.3f} s  (min {min(values):.3f}, max {max(values):.3f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    with BenchDaemon() as daemon:
        started = time.perf_counter()
        cid = asyncio.run(make_conversation(daemon, args.items))
        print(f"made a conversation of {args.items} items in {time.perf_counter() - started:.1f} s")
        fcp: list[float] = []
        ready: list[float] = []
        long_open: list[float] = []
        to_first: list[float] = []
        busy: list[float] = []  # of it, main-thread long tasks (drawing, parsing)
        with sync_playwright() as pw:
            context, app = signed_in(pw, daemon)
            for _ in range(args.runs):
                page = context.new_page()
                t0 = time.perf_counter()
                page.goto(app)
                page.wait_for_selector("body[data-connection='online']")
                page.wait_for_selector("#conv-list .conv")
                ready.append(time.perf_counter() - t0)
                fcp.append(
                    page.evaluate(
                        "() => performance.getEntriesByName('first-contentful-paint')[0].startTime"
                    )
                    / 1000
                )
                page.close()

                page = context.new_page()
                t0 = time.perf_counter()
                page.goto(f"{app}#{cid}")
                last = f"message {args.items // 2 - 1}"
                page.wait_for_function(
                    """(last) => [...document.querySelectorAll(
                        '#transcript .item[data-type="user_message"] .text')]
                        .some((e) => e.textContent === last)""",
                    arg=last,
                )
                long_open.append(time.perf_counter() - t0)

                first_text = "message 0"
                page.evaluate(
                    """() => {
                        window.__busy = 0;
                        new PerformanceObserver((list) => {
                            for (const e of list.getEntries()) window.__busy += e.duration;
                        }).observe({type: 'longtask'});
                    }"""
                )
                t0 = time.perf_counter()
                page.evaluate(
                    """(first) => new Promise((resolve) => {
                        const root = document.querySelector('#transcript');
                        const step = () => {
                            root.scrollTop = 0;
                            const el = root.querySelector('.item[data-type="user_message"] .text');
                            if (el && el.textContent === first
                                && !root.querySelector('.load-more:not([hidden])')) {
                                resolve();
                                return;
                            }
                            requestAnimationFrame(step);
                        };
                        step();
                    })""",
                    first_text,
                )
                to_first.append(time.perf_counter() - t0)
                page.wait_for_timeout(100)
                busy.append(page.evaluate("() => window.__busy") / 1000)
                page.close()
            context.browser.close()
    print(f"app first contentful paint:      {spread(fcp)}")
    print(f"app ready (online, list drawn):  {spread(ready)}")
    print(f"{args.items}-item conversation drawn: {spread(long_open)}")
    print(f"scroll to its first item:        {spread(to_first)}")
    print(f"  of which long tasks:           {spread(busy)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
