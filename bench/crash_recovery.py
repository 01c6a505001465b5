"""Crash-to-reconnected: how long a client that restarts daemons takes to serve again after its
daemon is killed with SIGKILL mid-reply, per client: the client library in this process
(`Client.connect(restart=True)`: the terminal UI, `openvaala acp`) and the editor bridge
(`openvaala lsp` over stdio, what VS Code's panel and Neovim's sidebar talk to; its `$/openvaala/
connection` `connected` is when they are told).

What it measures
    A real daemon (bench/_daemon.py: its own process, temp home and config) on the demo model
    with a slow pace, so a reply is streaming. A client in this process subscribes, sends a
    message, and once the first words arrived the daemon is killed (SIGKILL, the pid from the
    data directory's lock). Measured: kill → the client's `client/connection` `connected` note
    (it found the lock free, started `openvaala serve start`, connected and resubscribed), and
    whether its view kept the streamed words marked interrupted. Repeated `--rounds` times; each
    round kills the daemon the client started in the previous one.

Goal (issue 39): under 2 s. The daemon's own start-up is most of it (bench/daemon_startup.py).

Run: ``python bench/crash_recovery.py [--rounds N]`` (default 5; median and range printed per
client, with the load average of the machine beside them)

Results on this machine (2 cores shared with other engineers' test runs, Python 3.11), 3
crashes per client, load average 4.5 3.9 4.5:
    client library (terminal UI, ACP): median 2932 ms, range 2572–2998 ms; partial kept every time
    editor bridge (VS Code panel, Neovim sidebar): median 2841 ms, range 2745–3014 ms
After `exec` and the clients started the daemon themselves and a plain turn stopped importing the
MCP SDK (docs/design.md, "Exec starts the daemon itself"), 5 crashes per client, bytecode
compiled, load average 0.7 2.7 3.2:
    client library (terminal UI, ACP): median 342 ms, range 320–425 ms; partial kept every time
    editor bridge (VS Code panel, Neovim sidebar): median 366 ms, range 337–433 ms
Earlier (5 rounds, library only): p50 2298 ms. Before the fix (grace period whatever happened):
5 s plus the same start-up. No grace period is waited now (the lock is free after a SIGKILL):
what is left is `openvaala serve start` bringing a daemon up on a loaded machine
(bench/daemon_startup.py), so the 2 s goal is missed here under load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._daemon import BenchDaemon, percentile
from bench.vscode_panel import Bridge
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


async def bridge_round(bridge: Bridge, notes: asyncio.Queue[Any], home: Path) -> float:
    """One crash under the editor bridge: a reply streaming, then SIGKILL; until the bridge
    tells the editor it is connected again."""
    created = await bridge.request("openvaala/conversations/new", {})
    cid = created["conversation"]["conversationId"]
    await bridge.request("openvaala/subscribe", {"conversationId": cid})
    await bridge.request("openvaala/send", {"conversationId": cid, "text": "w " * 200})
    while True:
        method, params = await notes.get()
        delta = method == "$/openvaala/event" and params["method"] == "item/delta"
        if delta and params["conversationId"] == cid:
            break
    info = read_lock(home / LOCK_FILE)
    assert info is not None and info.pid is not None
    killed = time.perf_counter()
    os.kill(info.pid, signal.SIGKILL)
    while True:
        method, params = await notes.get()
        if method == "$/openvaala/connection" and params.get("state") == "connected":
            return time.perf_counter() - killed


async def bridge_rounds(daemon: BenchDaemon, rounds: int) -> list[float]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "openvaala_server", "lsp", env=daemon.env, cwd=daemon.workdir,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    bridge = Bridge(proc)
    notes: asyncio.Queue[Any] = asyncio.Queue()

    async def on_note(method: str, params: Any) -> None:
        notes.put_nowait((method, params))

    bridge.on_note = on_note
    reader = asyncio.ensure_future(bridge.read())
    init = {"capabilities": {}, "rootUri": f"file://{daemon.workdir}"}
    await bridge.request("initialize", init)
    await bridge.write({"method": "initialized", "params": {}})
    times: list[float] = []
    try:
        for n in range(rounds):
            took = await bridge_round(bridge, notes, daemon.home)
            times.append(took)
            print(f"bridge round {n + 1}: crash → reconnected {took * 1000:.0f} ms")
    finally:
        reader.cancel()
        proc.kill()
        await proc.wait()
    return times


def summary(client: str, times: list[float]) -> str:
    ms = sorted(t * 1000 for t in times)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{client}: crash → reconnected median {percentile(ms, 0.5):.0f} ms, range "
        f"{ms[0]:.0f}–{ms[-1]:.0f} ms over {len(ms)} crashes (goal < 2000); load average {load}"
    )


async def library_rounds(daemon: BenchDaemon, rounds: int) -> list[float]:
    client = await Client.connect(data_dir=daemon.home, start=False, restart=True)
    times: list[float] = []
    try:
        for n in range(rounds):
            took, kept = await one_round(client, daemon.home, daemon.workdir)
            times.append(took)
            print(f"round {n + 1}: crash → reconnected {took * 1000:.0f} ms, partial kept: {kept}")
    finally:
        await client.close()
    return times


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    daemon = BenchDaemon(SLOW_DEMO).start()
    os.environ.update({k: daemon.env[k] for k in ("OPENVAALA_HOME", "OPENVAALA_CONFIG")})
    try:
        library = await library_rounds(daemon, args.rounds)
        bridge = await bridge_rounds(daemon, args.rounds)
    finally:
        info = read_lock(daemon.home / LOCK_FILE)
        if info is not None and info.pid is not None:
            os.kill(info.pid, signal.SIGTERM)
        daemon.stop()
    print(summary("client library (terminal UI, ACP)", library))
    print(summary("editor bridge (VS Code panel, Neovim sidebar)", bridge))


if __name__ == "__main__":
    asyncio.run(main())
