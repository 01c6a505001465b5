"""Provider chunk → client latency with 10 subscribed clients, alone and while another
conversation starts turns (issue 17: "p99 provider chunk → client, 10 clients, while another
conversation starts turns", goal < 3 ms).

A real daemon is configured with an OpenAI-compatible model served by an SSE server in this
script. Conversation A's model call streams `--chunks` content chunks, one every `--pace-ms`;
the server notes ``perf_counter()`` as it writes each (after ``drain``). Ten raw websocket
clients subscribed to A note ``perf_counter()`` as each ``item/delta`` arrives; the delta's text
names its chunk, so receipt − write is the latency of that chunk to that client (one clock,
CLOCK_MONOTONIC, for both processes). In the loaded phase a control client meanwhile runs turns in
conversation B back to back (each a short model call at the same server: a request to build, a
turn's records to write, events to publish). The daemon's garbage-collector pauses are logged by
the bench bootstrap (``gc_log``) and printed too.

The server, the clients and the daemon share the machine's cores: the figures include the
clients' own scheduling. Run: ``python bench/fanout_load.py [--chunks 400] [--pace-ms 5]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._chat_sse import SSE_HEADERS, content_frame, read_request, write_done, write_frame
from bench._daemon import BenchDaemon, RawClient, percentile

CLIENTS = 10
CONFIG = """
[models.http]
provider = "openai"
model = "bench"
base_url = "http://127.0.0.1:{port}/v1"
context_window = 1000000
max_output_tokens = 1000

[agents.default]
description = "bench"
model = "http"
"""
DELTA = '{"jsonrpc":"2.0","method":"item/delta"'


class PacedSse:
    """Streams `chunks` paced chunks to a request whose last message says "stream", else a
    one-chunk reply; notes when each paced chunk was written."""

    def __init__(self, chunks: int, pace_s: float) -> None:
        self.chunks, self.pace_s = chunks, pace_s
        self.written: dict[int, float] = {}
        self.port = 0
        self.calls = 0

    async def start(self) -> None:
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (raw := await read_request(reader)) is not None:
                body = json.loads(raw)
                self.calls += 1
                last = body["messages"][-1].get("content") or ""
                writer.write(SSE_HEADERS)
                if "stream" in last:
                    for n in range(self.chunks):
                        write_frame(writer, content_frame(f"c{n} "))
                        await writer.drain()
                        self.written[n] = time.perf_counter()
                        await asyncio.sleep(self.pace_s)
                else:
                    write_frame(writer, content_frame("ok"))
                write_frame(writer, content_frame(None))
                write_done(writer)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def read_deltas(client: RawClient, ended: str) -> list[tuple[int, float]]:
    got: list[tuple[int, float]] = []
    clock = time.perf_counter
    while True:
        frame = await client.ws.recv()
        t = clock()
        if isinstance(frame, bytes):
            frame = frame.decode()
        if frame.startswith(DELTA):
            text = json.loads(frame)["params"]["delta"]
            got.append((int(text.strip()[1:]), t))
        elif ended in frame[:60]:
            return got


async def turns_meanwhile(client: RawClient, cid: str, stop: asyncio.Event) -> int:
    count = 0
    while not stop.is_set():
        await client.send("input/send", {"conversationId": cid, "text": f"turn {count}"})
        while True:
            message = json.loads(await client.ws.recv())
            if message.get("method") == "turn/ended":
                break
        count += 1
    return count


async def phase(daemon: BenchDaemon, server: PacedSse, loaded: bool) -> tuple[list[float], int]:
    address, token = daemon.address, daemon.token
    control = await RawClient.connect(address, token, "control")
    a = (await control.request("conversation/create", {"cwd": str(daemon.workdir)}))[
        "conversation"
    ]["conversationId"]
    b = (await control.request("conversation/create", {"cwd": str(daemon.workdir)}))[
        "conversation"
    ]["conversationId"]
    subs = [await RawClient.connect(address, token, f"c{i}") for i in range(CLIENTS)]
    for sub in subs:
        await sub.request("conversation/subscribe", {"conversationId": a})
    other = await RawClient.connect(address, token, "other")
    await other.request("conversation/subscribe", {"conversationId": b})
    server.written.clear()
    readers = [asyncio.create_task(read_deltas(sub, '"turn/ended"')) for sub in subs]
    stop = asyncio.Event()
    background = asyncio.create_task(turns_meanwhile(other, b, stop)) if loaded else None
    await control.request("input/send", {"conversationId": a, "text": "stream please"})
    results = await asyncio.gather(*readers)
    stop.set()
    turns = await background if background is not None else 0
    latencies = sorted(
        (t - server.written[n]) * 1000 for got in results for n, t in got if n in server.written
    )
    for client in (*subs, other, control):
        await client.close()
    return latencies, turns


args_verbose = [False]


async def main(chunks: int, pace_ms: float) -> None:
    server = PacedSse(chunks, pace_ms / 1000)
    await server.start()
    daemon = BenchDaemon(CONFIG.format(port=server.port), gc_log=True, slow_log=True)
    await asyncio.to_thread(daemon.start)
    try:
        warm = await RawClient.connect(daemon.address, daemon.token, "warm")
        cid = (await warm.request("conversation/create", {"cwd": str(daemon.workdir)}))[
            "conversation"
        ]["conversationId"]
        await warm.request("conversation/subscribe", {"conversationId": cid})
        await turns_meanwhile_once(warm, cid)
        await warm.close()
        for loaded in (False, True):
            latencies, turns = await phase(daemon, server, loaded)
            label = f"while {turns} turns ran in another conversation" if loaded else "alone"
            verdict = "ok" if percentile(latencies, 0.99) < 3 else "MISSED"
            print(
                f"{CLIENTS} clients, {label}: chunk → client p50 "
                f"{percentile(latencies, 0.5):.2f} ms, p99 {percentile(latencies, 0.99):.2f} ms "
                f"(goal < 3 ms: {verdict}), max {latencies[-1]:.2f} ms ({len(latencies)} deltas)"
            )
    finally:
        await asyncio.to_thread(daemon.stop)
        pauses = sorted(daemon.gc_pauses(), reverse=True)
        slow = sorted(daemon.slow_callbacks(), reverse=True)
        daemon.cleanup()
    if args_verbose[0]:
        for ms, what in slow[:15]:
            print(f"  loop held {ms:6.1f} ms by {what}")
    if pauses:
        print(
            f"daemon GC pauses: {len(pauses)}, longest "
            + ", ".join(f"{ms:.1f} ms (gen {gen})" for ms, gen in pauses[:5])
        )


async def turns_meanwhile_once(client: RawClient, cid: str) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(turns_meanwhile(client, cid, stop))
    stop.set()
    await task


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=400)
    parser.add_argument("--pace-ms", type=float, default=5.0)
    parser.add_argument("--verbose", action="store_true", help="the slowest loop callbacks")
    args = parser.parse_args()
    args_verbose[0] = args.verbose
    asyncio.run(main(args.chunks, args.pace_ms))
