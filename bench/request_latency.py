"""Request round trip on a connection that also receives the conversation's events.

What it measures
    A real daemon (its own process, temp data directory, demo model). One raw websocket client
    is subscribed to a conversation; another is not. Each sends `conversation/rename` (which
    publishes `conversation/updated` to subscribers, so the subscribed client receives an event
    just before its answer) and `conversation/usage` (no event), interleaved in rounds so both
    see the same machine load. Printed: p50 / p95 / max per case, and the subscribed ÷
    unsubscribed ratio of the p50s.

Why (issue 26): without TCP_NODELAY on accepted connections a reply written right after an
event waited for the client's delayed ACK (~40 ms); a subscribed rename took 44 ms instead of
0.6. The goal is a ratio near 1.

Run: ``python bench/request_latency.py [--rounds N]``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._daemon import BenchDaemon, RawClient, percentile


async def _timed(client: RawClient, method: str, params: dict[str, object]) -> float:
    start = time.perf_counter()
    await client.request(method, params)
    return time.perf_counter() - start


async def run(rounds: int) -> None:
    with BenchDaemon() as daemon:
        watcher = await RawClient.connect(daemon.address, daemon.token, "watcher")
        outsider = await RawClient.connect(daemon.address, daemon.token, "outsider")
        created = await watcher.request("conversation/create", {"cwd": str(daemon.workdir)})
        cid = created["conversation"]["conversationId"]
        await watcher.request("conversation/subscribe", {"conversationId": cid})
        # A first message makes the conversation durable, so it can be renamed.
        await watcher.request(
            "input/send", {"conversationId": cid, "text": "hello", "mode": "queue"}
        )
        await asyncio.sleep(0.5)
        times: dict[str, list[float]] = {}
        for i in range(rounds):
            for name, client in (("subscribed", watcher), ("unsubscribed", outsider)):
                rename = {"conversationId": cid, "title": f"title {i}"}
                times.setdefault(f"rename, {name}", []).append(
                    await _timed(client, "conversation/rename", rename)
                )
                times.setdefault(f"usage, {name}", []).append(
                    await _timed(client, "conversation/usage", {"conversationId": cid})
                )
        await watcher.close()
        await outsider.close()
    print(f"{'case':<26} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    p50: dict[str, float] = {}
    for case, values in times.items():
        values.sort()
        p50[case] = percentile(values, 0.5)
        print(
            f"{case:<26} {p50[case] * 1000:8.3f} {percentile(values, 0.95) * 1000:8.3f} "
            f"{values[-1] * 1000:8.3f}"
        )
    ratio = p50["rename, subscribed"] / p50["rename, unsubscribed"]
    print(f"rename p50, subscribed ÷ unsubscribed: {ratio:.2f}× (goal: near 1; was ~70×)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(run(args.rounds))


if __name__ == "__main__":
    main()
