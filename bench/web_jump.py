"""Jump to start in a long conversation, in Chromium against a real daemon (issue 36).

A conversation of ``--items`` items (written to the data directory before the daemon starts) is
opened by its address; the clock runs from the click on "Jump to start" until its first message
is on screen: the web app reads the rest of the history from the daemon in pages of 1,000
(conversation/read) and draws the first page. Figures: median and range of ``--runs`` runs,
each in a fresh page, with the machine's one-minute load average before and after.

Goal (issue 36): the first of 5,000 items in under 1 s (5.3 s by scrolling before).

Run: ``python bench/web_jump.py [--items 5000] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import BenchDaemon
from bench._history import write_conversation
from bench.web import signed_in, spread

# The start is drawn: the announcement is out, the view at its top, nothing earlier to read.
AT_START = """() => document.querySelector('#announce').textContent.includes('start')
  && document.querySelector('#transcript').scrollTop === 0
  && document.querySelector('#transcript .load-more').hidden"""


# From the header's menu when the header folded its actions into one.
CLICK_JUMP = """() => {
  const menu = document.querySelector('#actions-menu');
  if (menu && !menu.hidden) menu.click();
  document.querySelector('#jump-start').click();
}"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="ovbench-jump-") as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        work.mkdir()
        cid, _ = asyncio.run(write_conversation(home, work, args.items))
        jumps: list[float] = []
        load_before = os.getloadavg()[0]
        with BenchDaemon(home=home) as daemon, sync_playwright() as pw:
            context, app = signed_in(pw, daemon)
            for _ in range(args.runs):
                page = context.new_page()
                page.goto(f"{app}#{cid}")
                page.wait_for_selector("#transcript .item")
                page.wait_for_selector("#jump-start:not([disabled])")
                t0 = time.perf_counter()
                page.evaluate(CLICK_JUMP)
                page.wait_for_function(AT_START)
                jumps.append(time.perf_counter() - t0)
                page.close()
            context.browser.close()
    # The machine is shared: the figures mean little without the load they were taken at.
    load = f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    print(f"jump to the start of {args.items} items, {args.runs} runs: {spread(jumps)}; {load}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
