"""Daemon memory after opening large conversations and letting them go (issue 17, point 3).

For each scenario (default: five conversations of 10,000 items; one of 50,000) the conversations
are written by bench/_history.py (turns, tool calls, subagents, compactions) into a fresh data
directory and a real daemon is started on it. A raw websocket client then, per conversation:
subscribes, reads the whole history back by pages of 1,000 (so all of it has been in memory),
and unsubscribes. After the last one, with nobody subscribed and nothing running, the daemon's
resident memory (VmRSS of its process, /proc) is printed, next to the RSS of the same daemon
before anything was opened. Goal: < 100 MB whatever was opened.

With ``--subscribed`` the conversations stay subscribed instead, and the RSS per subscribed
conversation is printed (issue 40: "≤ 8 MB per opened 10k-item session while subscribed").

Each scenario's data is written once and measured on `--runs` fresh daemons: median (range),
with the load average beside.

Run: ``python bench/memory.py [--scenarios 5x10000,1x50000] [--settle 1.0] [--subscribed]
[--runs 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import BenchDaemon, RawClient
from bench._history import write_conversation


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def read_all(client: RawClient, cid: str) -> int:
    before: str | None = None
    seen = 0
    while True:
        params: dict[str, Any] = {"conversationId": cid, "limit": 1000}
        if before is not None:
            params["beforeItem"] = before
        page = await client.request("conversation/read", params)
        seen += len(page["items"])
        if not page["hasMore"]:
            return seen
        before = page["items"][0]["itemId"]


async def measure(
    home: Path, cids: list[str], size: int, settle: float, *, subscribed: bool = False
) -> tuple[float, float]:
    """RSS idle, and after opening every conversation of `home`: read whole and unsubscribed,
    or (with `subscribed`, issue 40: "≤ 8 MB per opened 10k-item session while subscribed")
    left subscribed, once what the opens started in the background has run."""
    with BenchDaemon(home=home) as daemon:
        assert daemon.process is not None
        pid = daemon.process.pid
        client = await RawClient.connect(daemon.address, daemon.token)
        try:
            await asyncio.sleep(settle)
            idle = rss_mb(pid)
            for cid in cids:
                await client.request("conversation/subscribe", {"conversationId": cid})
                if not subscribed:
                    assert await read_all(client, cid) == size
                    await client.request("conversation/unsubscribe", {"conversationId": cid})
            # Let anything deferred run (the histories' background loads, the releases).
            deadline = time.monotonic() + settle * (3 if subscribed else 1)
            while time.monotonic() < deadline:
                await client.request("conversation/list", {})
                await asyncio.sleep(0.05)
            after = rss_mb(pid)
        finally:
            await client.close()
    return idle, after


async def scenario(
    count: int, size: int, settle: float, shape: str, runs: int, subscribed: bool
) -> list[tuple[float, float, float]]:
    """(RSS idle, RSS after, load average) of `runs` fresh daemons on one data directory."""
    with tempfile.TemporaryDirectory(prefix="ovbench-memory-") as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        cwd.mkdir()
        cids = [(await write_conversation(home, cwd, size, shape))[0] for _ in range(count)]
        results = []
        for _ in range(runs):
            idle, after = await measure(home, cids, size, settle, subscribed=subscribed)
            results.append((idle, after, os.getloadavg()[0]))
        return results


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):6.1f} ({min(values):.1f}–{max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenarios", default="5x10000,1x50000")
    parser.add_argument("--settle", type=float, default=1.0)
    parser.add_argument("--shape", choices=("chat", "tools"), default="tools")
    parser.add_argument("--runs", type=int, default=1, help="fresh daemons per scenario")
    parser.add_argument(
        "--subscribed", action="store_true", help="RSS while every conversation is subscribed"
    )
    args = parser.parse_args()
    for spec in args.scenarios.split(","):
        count, size = (int(x) for x in spec.split("x"))
        results = asyncio.run(
            scenario(count, size, args.settle, args.shape, args.runs, args.subscribed)
        )
        idle = [r[0] for r in results]
        after = [r[1] for r in results]
        load = f"load {min(r[2] for r in results):.1f}–{max(r[2] for r in results):.1f}"
        if args.subscribed:
            each = [(held - base) / count for base, held, _ in results]
            print(
                f"{args.shape}: {count} x {size:,} items subscribed, {len(results)} runs: RSS idle "
                f"{_spread(idle)} MB, subscribed {_spread(after)} MB, {_spread(each)} MB per "
                f"conversation (goal ≤ 8 MB), {load}"
            )
            continue
        verdict = "ok" if statistics.median(after) < 100 else "MISSED"
        print(
            f"{args.shape}: {count} x {size:,} items, {len(results)} runs: RSS idle "
            f"{_spread(idle)} MB, after opening and unsubscribing {_spread(after)} MB "
            f"(goal < 100 MB: {verdict}), {load}"
        )


if __name__ == "__main__":
    main()
