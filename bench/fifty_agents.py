"""Fifty agents at once (issue 40): `--conversations` conversations streaming at the same time,
each model call sending a chunk every `--pace-ms` (20 a second by default) to two subscribed
clients, with a shell tool call in every turn; chunk → client latency and the daemon's CPU per
delivered chunk.

A real daemon is configured with an OpenAI-compatible model served by an SSE server in this
script. Each conversation's turn asks for a `shell` call (`echo`), whose result the model then
answers by streaming `--chunks` content chunks. The server notes ``perf_counter()`` as it writes
each chunk (after ``drain``); each raw websocket client notes ``perf_counter()`` as the
`item/delta` carrying it arrives (the delta names its conversation and chunk), so receipt −
write is that chunk's latency to that client (one clock, CLOCK_MONOTONIC, for both processes).
The daemon's CPU is read from ``/proc/<pid>/stat`` around the streaming, and divided by the
deltas delivered. `--runs` rounds (default 3) on one daemon: median and range, with the load
average. The server, the clients and the daemon share the machine's cores.

Run: ``python bench/fifty_agents.py [--conversations 50] [--chunks 100] [--pace-ms 50]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._chat_sse import SSE_HEADERS, content_frame, read_request, write_done, write_frame
from bench._daemon import BenchDaemon, RawClient, percentile
from bench.fanout_load import CONFIG as FANOUT_CONFIG
from bench.fanout_load import DELTA

# fanout_load's model and agent, the agent running its shell calls unasked.
CONFIG = FANOUT_CONFIG + 'approval = "never"\n'
CLIENTS_EACH = 2


def call_frame(call_id: str) -> dict[str, object]:
    call = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": "shell", "arguments": json.dumps({"command": "echo hi"})},
    }
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}


class Agents:
    """A model that first asks for a shell call, then streams the answer in paced chunks."""

    def __init__(self, chunks: int, pace_s: float) -> None:
        self.chunks, self.pace_s = chunks, pace_s
        self.written: dict[tuple[str, int], float] = {}
        self.port = 0

    async def start(self) -> None:
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (raw := await read_request(reader)) is not None:
                messages = json.loads(raw)["messages"]
                user = next(m for m in reversed(messages) if m["role"] == "user")
                tag = str(user["content"]).split()[-1]
                writer.write(SSE_HEADERS)
                if messages[-1]["role"] == "user":
                    write_frame(writer, call_frame(f"call-{tag}"))
                    write_frame(writer, {"choices": [{"index": 0, "delta": {},
                                                      "finish_reason": "tool_calls"}]})  # fmt: skip
                else:
                    for n in range(self.chunks):
                        write_frame(writer, content_frame(f"{tag}:{n} "))
                        await writer.drain()
                        self.written[tag, n] = time.perf_counter()
                        await asyncio.sleep(self.pace_s)
                    write_frame(writer, content_frame(None))
                write_done(writer)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def read_deltas(client: RawClient) -> list[tuple[str, int, float]]:
    """(tag, chunk, receipt time) of every delta until the turn ends."""
    got: list[tuple[str, int, float]] = []
    clock = time.perf_counter
    while True:
        frame = await client.ws.recv()
        t = clock()
        if isinstance(frame, bytes):
            frame = frame.decode()
        if frame.startswith(DELTA):
            # The shell's output streams as deltas too: only the model's chunks are counted.
            for word in str(json.loads(frame)["params"].get("delta", "")).split():
                tag, _, n = word.rpartition(":")
                if tag and n.isdigit():
                    got.append((tag, int(n), t))
        elif '"turn/ended"' in frame[:60]:
            return got


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def one_round(
    daemon: BenchDaemon, agents: Agents, count: int, round_no: int
) -> tuple[list[float], float, int]:
    control = await RawClient.connect(daemon.address, daemon.token, "control")
    cids = []
    for _ in range(count):
        created = await control.request("conversation/create", {"cwd": str(daemon.workdir)})
        cids.append(created["conversation"]["conversationId"])
    clients = []
    for n, cid in enumerate(cids):
        for k in range(CLIENTS_EACH):
            client = await RawClient.connect(daemon.address, daemon.token, f"c{n}-{k}")
            await client.request("conversation/subscribe", {"conversationId": cid})
            clients.append(client)
    readers = [asyncio.create_task(read_deltas(c)) for c in clients]
    assert daemon.process is not None
    cpu = cpu_seconds(daemon.process.pid)
    for n, cid in enumerate(cids):
        text = f"run the check {round_no}-{n}"
        await control.send("input/send", {"conversationId": cid, "text": text})
    results = await asyncio.gather(*readers)
    cpu = cpu_seconds(daemon.process.pid) - cpu
    latencies = sorted(
        (t - agents.written[tag, n]) * 1000
        for got in results
        for tag, n, t in got
        if (tag, n) in agents.written
    )
    for client in (*clients, control):
        await client.close()
    return latencies, cpu, sum(map(len, results))


async def main(count: int, chunks: int, pace_ms: float, runs: int) -> None:
    agents = Agents(chunks, pace_ms / 1000)
    await agents.start()
    daemon = BenchDaemon(CONFIG.format(port=agents.port))
    await asyncio.to_thread(daemon.start)
    p50s, p99s, per_chunk, loads = [], [], [], []
    try:
        for round_no in range(runs):
            latencies, cpu, delivered = await one_round(daemon, agents, count, round_no)
            p50s.append(percentile(latencies, 0.5))
            p99s.append(percentile(latencies, 0.99))
            per_chunk.append(cpu / max(1, delivered) * 1e6)
            loads.append(os.getloadavg()[0])
            print(
                f"round {round_no + 1}: {count} conversations × {CLIENTS_EACH} clients, "
                f"{delivered:,} deltas: p50 {p50s[-1]:.1f} ms, p99 {p99s[-1]:.1f} ms, daemon CPU "
                f"{cpu:.2f} s ({per_chunk[-1]:.0f} µs per delivered chunk), load {loads[-1]:.1f}",
                flush=True,
            )
    finally:
        await asyncio.to_thread(daemon.stop)
        daemon.cleanup()

    def spread(values: list[float], unit: str) -> str:
        return f"{statistics.median(values):.1f} {unit} ({min(values):.1f}–{max(values):.1f})"

    print(
        f"{count} agents at {1000 / pace_ms:.0f} chunks/s, {CLIENTS_EACH} clients each, a tool "
        f"call per turn, {runs} runs: chunk → client p50 {spread(p50s, 'ms')}, p99 "
        f"{spread(p99s, 'ms')}; daemon CPU per delivered chunk {spread(per_chunk, 'µs')}; "
        f"load {statistics.median(loads):.1f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--chunks", type=int, default=100)
    parser.add_argument("--pace-ms", type=float, default=50.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.conversations, args.chunks, args.pace_ms, args.runs))
