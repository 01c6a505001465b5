"""Crash-to-reconnected: how long a client that restarts daemons (the editor bridge, `openvaala
acp`, the terminal UI: the client library's `Client.connect(restart=True)`) takes to serve again
after its daemon is killed with SIGKILL mid-reply.

What it measures
    A real daemon (bench/_daemon.py: its own process, temp home and config) on the demo model
    with a slow pace, so a reply is streaming. A client in this process subscribes, sends a
    message, and once the first words arrived the daemon is killed (SIGKILL, the pid from the
    data directory's lock). Measured: kill → the client's `client/connection` `connected` note
    (it found the lock free, started `openvaala serve start`, connected and resubscribed), and
    whether its view kept the streamed words marked interrupted. Repeated `--rounds` times; each
    round kills the daemon the client started in the previous one.

Goal (issue 39): under 2 s. The daemon's own start-up is most of it (bench/daemon_startup.py).

Run: ``python bench/crash_recovery.py [--rounds N]`` (default 5)

Results on this machine (2 cores shared with ~7 engineers' test runs, Python 3.11), 5 rounds:
    3048, 2245, 1855, 2298, 2374 ms (p50 2298 ms); the partial reply kept every round. Before
    (grace period whatever happened): 5 s plus the same start-up. Most of what is left is
    `openvaala serve start` bringing a daemon up on a loaded machine (bench/daemon_startup.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import BenchDaemon, percentile
from openvaala_server.client import CONNECTION, Client
from openvaala_server.client.view import ConversationView
from openvaala_server.discovery import LOCK_FILE, read_lock

SLOW_DEMO = """
[models.demo]
provider = "demo"
pace_ms = 200

[agents.default]
description = "General assistant"
model = "demo"
"""


async def one_round(client: Client, home: Path, workdir: Path) -> tuple[float, bool]:
    created = await client.request("conversation/create", {"cwd": str(workdir)})
    cid = created["conversation"]["conversationId"]
    subscribed = await client.subscribe(cid)
    view = ConversationView.from_snapshot(subscribed["snapshot"] or {}, subscribed["seq"])
    await client.request("input/send", {"conversationId": cid, "text": "think: " + "w " * 200})
    notes = client.notifications()
    async for note in notes:
        if note["params"].get("conversationId") not in (cid, None):
            continue  # an earlier round's conversation
        view.apply(note)
        root = view.root
        if root is not None and any(
            i.get("text") for i in root.items if i["type"] != "user_message"
        ):
            break
    info = read_lock(home / LOCK_FILE)
    assert info is not None and info.pid is not None
    killed = time.perf_counter()
    os.kill(info.pid, signal.SIGKILL)
    async for note in notes:
        if note["params"].get("conversationId") not in (cid, None):
            continue
        view.apply(note)
        if note["method"] == CONNECTION and note["params"].get("state") == "connected":
            break
    took = time.perf_counter() - killed
    root = view.root
    kept = root is not None and any(i.get("status") == "interrupted" for i in root.items)
    return took, kept


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    daemon = BenchDaemon(SLOW_DEMO).start()
    os.environ.update({k: daemon.env[k] for k in ("OPENVAALA_HOME", "OPENVAALA_CONFIG")})
    client = await Client.connect(data_dir=daemon.home, start=False, restart=True)
    times: list[float] = []
    try:
        for n in range(args.rounds):
            took, kept = await one_round(client, daemon.home, daemon.workdir)
            times.append(took)
            print(f"round {n + 1}: crash → reconnected {took * 1000:.0f} ms, partial kept: {kept}")
    finally:
        await client.close()
        info = read_lock(daemon.home / LOCK_FILE)
        if info is not None and info.pid is not None:
            os.kill(info.pid, signal.SIGTERM)
        daemon.stop()
    ms = sorted(t * 1000 for t in times)
    print(
        f"crash → reconnected: p50 {percentile(ms, 0.5):.0f} ms, max {ms[-1]:.0f} ms (goal < 2000)"
    )


if __name__ == "__main__":
    asyncio.run(main())
