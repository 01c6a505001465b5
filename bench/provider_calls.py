"""Model calls through an HTTP provider: connections per call and event-loop stalls (issue 17,
"one HTTP client per provider, kept").

A real daemon is configured with an OpenAI-compatible model at a tiny local SSE server started
by this script (HTTP/1.1, keep-alive, a few chunks then ``[DONE]``; it counts the TCP
connections it accepts). One client runs `--turns` turns one after another; a second client
meanwhile sends `conversation/list` every 2 ms and times each round trip — a request waits
while the daemon's event loop is busy, so the round trips' p99 and max show its stalls (the
issue's measure was the p99 of stream chunks to clients; this one needs no instrumentation).

Prints: TCP connections per model call, the mean turn time, and the round trips' p50 / p99 /
max (ms). Run: ``python bench/provider_calls.py [--turns 40]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._chat_sse import SSE_HEADERS, content_frame, read_request, write_done, write_frame
from bench._daemon import BenchDaemon, RawClient, percentile

CHUNKS = ["Hello", " from", " the", " bench", " provider."]


class SseServer:
    def __init__(self) -> None:
        self.connections = 0
        self.calls = 0
        self.port = 0

    async def start(self) -> None:
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while await read_request(reader) is not None:
                self.calls += 1
                writer.write(SSE_HEADERS)
                for chunk in [*CHUNKS, None]:
                    write_frame(writer, content_frame(chunk))
                write_done(writer)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def main(turns: int) -> None:
    server = SseServer()
    await server.start()
    config = f"""
[models.http]
provider = "openai"
model = "bench"
base_url = "http://127.0.0.1:{server.port}/v1"
context_window = 100000
max_output_tokens = 1000

[agents.default]
description = "bench"
model = "http"
"""
    daemon = BenchDaemon(config)
    await asyncio.to_thread(daemon.start)
    try:
        worker = await RawClient.connect(daemon.address, daemon.token, "worker")
        pinger = await RawClient.connect(daemon.address, daemon.token, "pinger")
        created = await worker.request("conversation/create", {"cwd": str(daemon.workdir)})
        cid = created["conversation"]["conversationId"]
        await worker.request("conversation/subscribe", {"conversationId": cid})
        stop = asyncio.Event()
        rtts: list[float] = []

        async def ping() -> None:
            while not stop.is_set():
                started = time.perf_counter()
                await pinger.request("conversation/list", {"limit": 1})
                rtts.append((time.perf_counter() - started) * 1000)
                await asyncio.sleep(0.002)

        pinging = asyncio.create_task(ping())
        started = time.perf_counter()
        for n in range(turns):
            await worker.send("input/send", {"conversationId": cid, "text": f"turn {n}"})
            while True:
                message = json.loads(await worker.ws.recv())
                if message.get("method") == "turn/ended":
                    assert message["params"]["status"] == "completed", message
                    break
        elapsed = time.perf_counter() - started
        stop.set()
        await pinging
        await worker.close()
        await pinger.close()
    finally:
        await asyncio.to_thread(daemon.cleanup)
    rtts.sort()
    print(
        f"{turns} turns: {server.connections} TCP connections for {server.calls} model calls; "
        f"{elapsed / turns * 1000:.1f} ms a turn | round trips meanwhile ({len(rtts)}): "
        f"p50 {statistics.median(rtts):.2f} ms, p99 {percentile(rtts, 0.99):.2f} ms, "
        f"max {rtts[-1]:.2f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=40)
    asyncio.run(main(parser.parse_args().turns))
