"""MCP benchmark: the latency an MCP tool call adds through OpenVaala, against the SDK alone.

What it measures, in two parts of one run. In each, the SDK-built test server
(tests/server/mcp/mcp_test_server.py, stdio) is called through OpenVaala and, alternately, in a
second process of the same server through the official SDK directly (`stdio_client` +
`ClientSession.call_tool("echo", …)` in this process: the floor for one MCP call), so a change in
the machine's load hits both alike.
1. Through the daemon (the goal's figure): a real daemon (its own process, temp data directory,
   the demo model, `[mcp_servers.bench]` with `trust = true`) runs one turn per call; the demo
   model's `call: mcp__bench__echo {...}` makes the call. The call's time is as the daemon
   reports it: from publishing the `tool_result`'s `item/started` to publishing its
   `item/completed` (both timed inside the daemon as the hub numbers them, bench/_daemon.py's
   emit log), i.e. the tool run, its result bounded, and the result written to the journal
   (fsync) before clients hear of it. The same span of a built-in tool call (`read_file` of a
   small file, alternated) shows what any tool call costs the daemon, MCP or not.
2. In process: ``McpTool.run({"text": …}, ctx)`` of the tool `McpManager` offers (the shared
   connection, the tool timeout, the result mapped and bounded), without the daemon around it.
Figures are p50 / p95 over N calls each after W warm-up calls.

Goal (issue 18): under 5 ms added at p50 (through the daemon, against the SDK direct call).

The daemon's data directory is a temporary directory: on a disk, every tool result's journal
write (fsync) is in the span; ``TMPDIR=/dev/shm python bench/mcp.py`` puts it on tmpfs, which
leaves out the disk and shows what the daemon and MCP themselves add.

Run: ``python bench/mcp.py [--calls N] [--warmup N] [--turns N]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# This file is named like the SDK's package: drop its own directory (Python puts it first) so
# `import mcp` finds the SDK, and put the repository root there instead.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import orjson  # noqa: E402 (after the path fix above)
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402 (after the path fix above)

from bench._daemon import BenchDaemon, RawClient, check_clock  # noqa: E402 (after the path fix above)
from openvaala_server.config import McpServerConfig  # noqa: E402 (after the path fix above)
from openvaala_server.mcp.manager import McpManager  # noqa: E402 (after the path fix above)
from openvaala_server.structured import Supervisor  # noqa: E402 (after the path fix above)
from openvaala_server.tools.base import ToolContext  # noqa: E402 (after the path fix above)

SERVER = Path(__file__).resolve().parent.parent / "tests" / "server" / "mcp" / "mcp_test_server.py"


def _ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _config() -> str:
    python, server = json.dumps(sys.executable), json.dumps(str(SERVER))
    return f"""
[models.demo]
provider = "demo"
pace_ms = 0
context_window = 1000000
max_output_tokens = 8000

[agents.default]
description = "bench"
model = "demo"
tools = ["read_file", "mcp:bench"]

[mcp_servers.bench]
command = {python}
args = [{server}, "stdio"]
startup_timeout_s = 60
trust = true
"""


async def _turn(client: RawClient, cid: str, text: str) -> tuple[int, int, dict[str, Any]]:
    """One turn; the seqs of its tool_result's item/started and item/completed, and the item."""
    msg_id = await client.send("input/send", {"conversationId": cid, "text": text, "mode": "queue"})
    answered = ended = False
    started = completed = 0
    result: dict[str, Any] = {}
    while not (answered and ended):
        message = orjson.loads(await client.ws.recv())
        if message.get("id") == msg_id:
            if "error" in message:
                raise RuntimeError(f"input/send: {message['error']}")
            answered = True
            continue
        params = message.get("params") or {}
        method = message.get("method")
        item = params.get("item") or {}
        if method == "item/started" and item.get("type") == "tool_result":
            started = params["seq"]
        elif method == "item/completed" and item.get("type") == "tool_result":
            completed, result = params["seq"], item
        elif method == "turn/ended":
            ended = True
    return started, completed, result


async def through_daemon(turns: int, warmup: int) -> dict[str, list[float]]:
    check_clock()
    times: dict[str, list[float]] = {
        "SDK direct": [],
        "daemon: mcp echo": [],
        "daemon: read_file": [],
    }
    spans: list[tuple[str, int, int]] = []
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "stdio"])
    daemon = BenchDaemon(_config(), emit_log=True).start()
    print(f"daemon data directory: {daemon.home}")
    try:
        (daemon.workdir / "small.txt").write_text("hello\n")
        client = await RawClient.connect(daemon.address, daemon.token)
        created = await client.request("conversation/create", {"cwd": str(daemon.workdir)})
        cid = created["conversation"]["conversationId"]
        await client.request("conversation/subscribe", {"conversationId": cid})
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for i in range(warmup + turns):
                text = f"call {i}"
                start = time.perf_counter()
                raw = await session.call_tool("echo", {"text": text})
                direct = time.perf_counter() - start
                assert not raw.is_error
                args = json.dumps({"text": text})
                mcp = await _turn(client, cid, f"call: mcp__bench__echo {args}")
                assert mcp[2].get("output") == text and not mcp[2].get("isError"), mcp[2]
                builtin = await _turn(client, cid, 'call: read_file {"path": "small.txt"}')
                assert not builtin[2].get("isError"), builtin[2]
                if i >= warmup:
                    times["SDK direct"].append(direct)
                    spans.append(("daemon: mcp echo", mcp[0], mcp[1]))
                    spans.append(("daemon: read_file", builtin[0], builtin[1]))
        await client.close()
    finally:
        daemon.stop()
    emitted = {seq: before for _cid, seq, before, _after in daemon.emits()}
    for name, first, last in spans:
        times[name].append(emitted[last] - emitted[first])
    daemon.cleanup()
    return times


def _report(title: str, times: dict[str, list[float]], fast: str, slow: str) -> None:
    print(title)
    print(f"{'':20}{'p50 ms':>9}{'p95 ms':>9}{'mean ms':>9}")
    for name, samples in times.items():
        mean = statistics.fmean(samples) * 1000
        print(f"{name:20}{_ms(samples, 0.5):9.3f}{_ms(samples, 0.95):9.3f}{mean:9.3f}")
    added = _ms(times[slow], 0.5) - _ms(times[fast], 0.5)
    verdict = "met" if added < 5 else "NOT met"
    print(f"added at p50 ({slow} - {fast}): {added:.3f} ms (goal under 5 ms: {verdict})")


async def main(calls: int, warmup: int, turns: int) -> None:
    daemon_times = await through_daemon(turns, min(warmup, 20))
    _report(
        f"1. Through the daemon: {turns} turns each calling mcp__bench__echo, and as many calling "
        "read_file, after warm-up",
        daemon_times,
        "SDK direct",
        "daemon: mcp echo",
    )
    own = _ms(daemon_times["daemon: read_file"], 0.5)
    mcp_part = _ms(daemon_times["daemon: mcp echo"], 0.5) - own
    direct = _ms(daemon_times["SDK direct"], 0.5)
    print(
        f"   of which any tool call's own cost in the daemon (read_file p50, mostly the journal "
        f"write): {own:.3f} ms;\n   the MCP part (mcp echo - read_file p50): {mcp_part:.3f} ms, "
        f"{mcp_part - direct:+.3f} ms against the SDK direct call"
    )
    print()
    await in_process(calls, warmup)


async def in_process(calls: int, warmup: int) -> None:
    config = McpServerConfig(
        name="bench", command=sys.executable, args=(str(SERVER), "stdio"), startup_timeout_s=60
    )
    async with Supervisor("bench") as tasks:
        manager = McpManager({"bench": config}, tasks)
        [tool] = [t for t in await manager.tools_for(["mcp:bench"]) if t.spec.name.endswith("echo")]
        ctx = ToolContext(cwd=Path.cwd(), emit_output=lambda _: None)
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "stdio"])
        direct: list[float] = []
        adapter: list[float] = []
        try:
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                for i in range(warmup + calls):
                    text = f"call {i}"
                    start = time.perf_counter()
                    raw = await session.call_tool("echo", {"text": text})
                    mid = time.perf_counter()
                    result = await tool.run({"text": text}, ctx)
                    end = time.perf_counter()
                    assert not raw.is_error and result.output == text, result
                    if i >= warmup:
                        direct.append(mid - start)
                        adapter.append(end - mid)
        finally:
            await manager.shutdown()
    _report(
        f"2. In process (manager + adapter, no daemon): {calls} calls each after {warmup} warm-up",
        {"SDK direct": direct, "adapter": adapter},
        "SDK direct",
        "adapter",
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--turns", type=int, default=200, help="daemon turns per tool")
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.warmup, args.turns))
