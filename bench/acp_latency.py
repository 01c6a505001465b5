"""ACP latency benchmark (not `bench/acp.py`: that name would shadow the `acp` package when run as a
script): how much later a streamed chunk reaches an ACP client through
`openvaala acp` than a websocket client of the daemon, in one run.

What it measures
    A real daemon (bench/_daemon.py: its own process, temp home and config, port 0) on the demo
    model with ``pace_ms`` between words. A websocket client (``RawClient``, in this process)
    subscribes to a conversation; an ACP client (the ``agent-client-protocol`` package's
    ``ClientSideConnection``, in this process) spawns ``python -m openvaala_server acp`` and opens
    the same conversation with ``session/load``. The websocket client then sends
    ``think: w0 w1 … wN``: the demo model streams one reasoning delta per word, which the
    websocket client receives as ``item/delta`` and the ACP client as ``agent_thought_chunk``.

    - emit time: the daemon is started through bench/_daemon.py's bootstrap, which logs
      ``perf_counter()`` as ``Hub.publish`` numbers each event — the moment the provider's chunk
      has been parsed and is handed to the clients. ``perf_counter`` is CLOCK_MONOTONIC on Linux,
      one clock for all processes.
    - receipt time: ``perf_counter()`` when the websocket client's ``recv()`` returns, and when
      the ACP client's ``session_update`` handler is called (after the package parsed and
      validated the message).
    - latency = receipt − emit for every word, matched by its text; p50/p90/p99/max for each
      client, and the ACP overhead = ACP latency − websocket latency of the same word.

Goal (issue 19): ACP adds under 2 ms at p50.

Run: ``python bench/acp_latency.py [--words N] [--pace-ms MS]``
(default: 400 words, 5 ms apart; about 10 s)

Results on this machine (2 cores shared with other jobs, Python 3.11), default run:
    see docs/design.md, "Agent Client Protocol (`openvaala acp`)".
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from acp.schema import AgentThoughtChunk

from bench._acp import acp_connection
from bench._daemon import BenchDaemon, RawClient, check_clock, percentile


class Recorder:
    """The ACP client: notes when each thought chunk arrives."""

    def __init__(self) -> None:
        self.arrivals: dict[str, float] = {}
        self.done = asyncio.Event()
        self.last = ""

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        now = time.perf_counter()
        if isinstance(update, AgentThoughtChunk):
            word = update.content.text.strip()
            self.arrivals.setdefault(word, now)
            if word == self.last:
                self.done.set()

    async def request_permission(self, *args: Any, **kw: Any) -> Any:
        raise RuntimeError("no approvals in this benchmark")

    def on_connect(self, conn: Any) -> None:
        pass


def config(pace_ms: float) -> str:
    return f"""
[models.demo]
provider = "demo"
pace_ms = {pace_ms}
context_window = 1000000
max_output_tokens = 8000

[agents.default]
description = "General assistant"
model = "demo"
"""


async def run(n_words: int, pace_ms: float) -> None:
    daemon = BenchDaemon(config(pace_ms), emit_log=True).start()
    try:
        ws = await RawClient.connect(daemon.address, daemon.token, "bench-ws")
        created = await ws.request("conversation/create", {"cwd": str(daemon.workdir)})
        cid = created["conversation"]["conversationId"]
        await ws.request("input/send", {"conversationId": cid, "text": "warm up"})
        await asyncio.sleep(1.0)  # persisted, so session/load finds it
        await ws.request("conversation/subscribe", {"conversationId": cid})
        rec = Recorder()
        words = [f"w{i}" for i in range(n_words)]
        rec.last = words[-1]
        async with acp_connection(rec, daemon.env) as conn:
            await conn.load_session(cwd=str(daemon.workdir), session_id=cid, mcp_servers=[])
            ws_arrivals: dict[str, float] = {}
            seq_of: dict[str, int] = {}
            await ws.send(
                "input/send", {"conversationId": cid, "text": "think: " + " ".join(words)}
            )
            while words[-1] not in ws_arrivals:
                frame = await ws.ws.recv()
                now = time.perf_counter()
                message = orjson.loads(frame)
                params = message.get("params") or {}
                if message.get("method") == "item/delta":
                    word = str(params.get("delta")).strip()
                    if word in words and word not in ws_arrivals:
                        ws_arrivals[word] = now
                        seq_of[word] = int(params["seq"])
            await asyncio.wait_for(rec.done.wait(), 30)
            await asyncio.sleep(0.5)  # let the turn end before the agent goes away
        await ws.close()
    finally:
        daemon.stop()
    emitted = {seq: before for _cid, seq, before, _after in daemon.emits()}
    daemon.cleanup()
    report(words, emitted, seq_of, ws_arrivals, rec.arrivals)


def report(
    words: list[str],
    emitted: dict[int, float],
    seq_of: dict[str, int],
    ws_at: dict[str, float],
    acp_at: dict[str, float],
) -> None:
    both = [w for w in words if w in ws_at and w in acp_at and seq_of.get(w) in emitted]
    ws_lat = sorted((ws_at[w] - emitted[seq_of[w]]) * 1e3 for w in both)
    acp_lat = sorted((acp_at[w] - emitted[seq_of[w]]) * 1e3 for w in both)
    extra = sorted((acp_at[w] - ws_at[w]) * 1e3 for w in both)

    def row(name: str, values: list[float]) -> str:
        stats = [percentile(values, q) for q in (0.5, 0.9, 0.99)] + [max(values)]
        return f"  {name:<22}" + "  ".join(f"{v:7.2f}" for v in stats)

    print(f"{len(both)} chunks seen by both clients (of {len(words)})")
    print(f"  {'latency (ms)':<22}{'p50':>7}  {'p90':>7}  {'p99':>7}  {'max':>7}")
    print(row("websocket client", ws_lat))
    print(row("ACP client", acp_lat))
    print(row("ACP − websocket", extra))
    added = percentile(acp_lat, 0.5) - percentile(ws_lat, 0.5)
    verdict = "ok" if added < 2 else "MISSED"
    print(f"ACP adds {added:.2f} ms at p50 (goal < 2 ms: {verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--words", type=int, default=400)
    parser.add_argument("--pace-ms", type=float, default=5)
    args = parser.parse_args()
    check_clock()
    asyncio.run(run(args.words, args.pace_ms))


if __name__ == "__main__":
    main()
