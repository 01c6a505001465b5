"""MCP benchmark: the latency an MCP tool call adds through OpenVaala's manager and tool adapter.

What it measures
    Two processes of the same SDK-built test server (tests/server/mcp/mcp_test_server.py, stdio),
    called alternately in one run, so a change in the machine's load hits both alike:
    - SDK direct: `ClientSession.call_tool("echo", …)` on a session opened with the official
      SDK's `stdio_client` in this process: the floor for one MCP call;
    - adapter: the product path, ``McpTool.run({"text": …}, ctx)`` of the tool `McpManager`
      offers as `mcp__bench__echo` (the shared connection, the tool timeout, the result mapped to
      a `ToolResult` and bounded), timed from the call to the returned result.
    Figures are p50 / p95 over N calls each after W warm-up calls. The daemon's own cost of a
    tool call (the turn loop, events to clients) is not in it: the runtime wiring is measured by
    bench/request_latency.py.

Goal (issue 18): under 5 ms added at p50.

Run: ``python bench/mcp.py [--calls N] [--warmup N]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

# This file is named like the SDK's package: drop its own directory (Python puts it first) so
# `import mcp` finds the SDK, and put the repository root there instead.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402 (after the path fix above)

from openvaala_server.config import McpServerConfig  # noqa: E402 (after the path fix above)
from openvaala_server.mcp.manager import McpManager  # noqa: E402 (after the path fix above)
from openvaala_server.tools.base import ToolContext  # noqa: E402 (after the path fix above)

SERVER = Path(__file__).resolve().parent.parent / "tests" / "server" / "mcp" / "mcp_test_server.py"


def _ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def main(calls: int, warmup: int) -> None:
    config = McpServerConfig(
        name="bench", command=sys.executable, args=(str(SERVER), "stdio"), startup_timeout_s=60
    )
    manager = McpManager({"bench": config})
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
    print(f"MCP echo call over stdio, {calls} calls each after {warmup} warm-up calls")
    print(f"{'':14}{'p50 ms':>9}{'p95 ms':>9}{'mean ms':>9}")
    for name, samples in (("SDK direct", direct), ("adapter", adapter)):
        mean = statistics.fmean(samples) * 1000
        print(f"{name:14}{_ms(samples, 0.5):9.3f}{_ms(samples, 0.95):9.3f}{mean:9.3f}")
    added = _ms(adapter, 0.5) - _ms(direct, 0.5)
    verdict = "met" if added < 5 else "NOT met"
    print(f"added at p50: {added:.3f} ms (goal under 5 ms: {verdict})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=50)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.warmup))
