"""The first model request after opening a long conversation, against later ones (issue 17,
point 4: "first request assembly after opening a 10k-item conversation < 5 ms").

For each size (default 1k / 10k / 50k items, bench/_history.py's ``tools`` shape) a conversation
is written into a fresh data directory, and a real daemon is started on it with an
OpenAI-compatible model served by a tiny SSE server in this script (bench/provider_calls.py's),
with a context window large enough that nothing is compacted. The daemon is started through the
bench bootstrap with ``call_log``: it notes ``perf_counter()`` as each model call starts
(``TurnRunner._call_model``) and as its body has been built (``http.sse_events`` is called with
it); the SSE server notes it as the request's last byte arrives. Two figures per request, on the
same clock (CLOCK_MONOTONIC, shared by the processes): the assembly (call start → body built:
the threshold check, AGENTS.md, the context, the wire form of what the session appended since
its last call, models/assembly.py) — the issue's figure —, and call start → the provider has it
all (plus the JSON encoding of the whole body and sending megabytes over loopback to a Python
reader on the same loaded cores).

Per size: a warm-up turn in a small conversation (the provider and its HTTP connection exist
from then on), then the long conversation is opened (subscribe) and, `--think` seconds later (a
user reading the screen), three turns are run one after another. Printed: the first request's
figure and the later ones', with the load average at the start of the run.

Run: ``python bench/first_request.py [--sizes 1000,10000,50000] [--think 1.0] [--runs 1]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._chat_sse import SSE_HEADERS, content_frame, read_request, write_done, write_frame
from bench._daemon import BenchDaemon, RawClient
from bench._history import write_conversation

CONFIG = """
[models.http]
provider = "openai"
model = "bench"
base_url = "http://127.0.0.1:{port}/v1"
context_window = 100000000
max_output_tokens = 1000

[agents.default]
description = "bench"
model = "http"
"""


USAGE = {"prompt_tokens": 1000, "completion_tokens": 2, "total_tokens": 1002}


class TimedSse:
    """An OpenAI-compatible SSE server that notes when each request has fully arrived."""

    def __init__(self) -> None:
        self.received: list[float] = []
        self.port = 0

    async def start(self) -> None:
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await read_request(reader) is not None:
                self.received.append(time.perf_counter())
                writer.write(SSE_HEADERS)
                write_frame(writer, content_frame("Done."))
                write_frame(writer, content_frame(None))
                # Usage reported, as OpenAI does: a server that reports none is asked to count
                # the request afterwards (models/server_usage.py), which this server would take
                # for another model call.
                write_frame(writer, {"choices": [], "usage": USAGE})
                write_done(writer)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def turn(client: RawClient, cid: str, text: str) -> None:
    await client.send("input/send", {"conversationId": cid, "text": text})
    while True:
        message = json.loads(await client.ws.recv())
        if message.get("method") == "turn/ended":
            assert message["params"]["status"] == "completed", message
            return


async def measure(size: int, think: float) -> tuple[list[float], list[float]]:
    server = TimedSse()
    await server.start()
    with tempfile.TemporaryDirectory(prefix="ovbench-first-") as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        cwd.mkdir()
        cid, _ = await write_conversation(home, cwd, size, "tools", model="http")
        daemon = BenchDaemon(CONFIG.format(port=server.port), home=home, call_log=True)
        await asyncio.to_thread(daemon.start)
        try:
            client = await RawClient.connect(daemon.address, daemon.token)
            small = await client.request("conversation/create", {"cwd": str(cwd)})
            small_id = small["conversation"]["conversationId"]
            await client.request("conversation/subscribe", {"conversationId": small_id})
            await turn(client, small_id, "warm up")
            await client.request("conversation/unsubscribe", {"conversationId": small_id})
            await client.request("conversation/subscribe", {"conversationId": cid})
            await asyncio.sleep(think)
            for n in range(3):
                await turn(client, cid, f"question {n}")
            await client.close()
        finally:
            await asyncio.to_thread(daemon.stop)
            starts, built = daemon.call_times()
            daemon.cleanup()
    assembly = [(b - s) * 1000 for s, b in zip(starts, built, strict=True)]
    sent = [(got - s) * 1000 for s, got in zip(starts, server.received, strict=True)]
    return assembly[1:], sent[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--think", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=1, help="runs per size, one line each")
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        for _ in range(args.runs):
            load = os.getloadavg()[0]
            assembly, sent = asyncio.run(measure(size, args.think))
            verdict = "ok" if assembly[0] < 5 else "MISSED"
            print(
                f"{size:>7,} items: assembly, first request after open {assembly[0]:7.2f} ms "
                f"(goal < 5 ms: {verdict}), later {assembly[1]:.2f} / {assembly[2]:.2f} ms | "
                f"until the provider has it: first {sent[0]:.1f}, later {sent[1]:.1f} / "
                f"{sent[2]:.1f} ms | load {load:.1f}"
            )


if __name__ == "__main__":
    main()
