"""From `openvaala setup` (flags) to the first answered turn (issue 33).

What it measures
    On a fresh machine state (empty config and data directories), against a local scripted
    OpenAI-compatible server (`GET /v1/models`, streamed `POST /v1/chat/completions`, answering
    at once):
      - setup: ``openvaala setup --provider compatible --base-url … --model … --api-key-stdin``
        (the key on stdin), wall time from spawn to exit: listing the models, writing
        config.toml and the key file, loading the config, the test turn;
      - first turn: ``openvaala exec "hello"`` right after, which finds no daemon, starts one on
        the new config and prints the answer: wall time from spawn to exit;
      - total: the two together, what a user waits from typing the command to a first answer
        (their own typing and the real model's thinking aside).
    Each run starts from empty directories; the daemon is stopped after each run.

Run: ``python bench/setup_time.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._chat_sse import SSE_HEADERS, content_frame, write_done, write_frame

KEY = "sk-bench-0123456789"
MODEL = "bench-model"


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while line := await reader.readline():
            method, path, _ = line.decode().split(" ", 2)
            length = 0
            while (header := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = header.decode().partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            await reader.readexactly(length)
            if method == "GET" and path.endswith("/models"):
                body = json.dumps({"object": "list", "data": [{"id": MODEL}]}).encode()
                head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            elif path.endswith("/chat/completions"):
                writer.write(SSE_HEADERS)
                write_frame(writer, content_frame("ready"))
                write_frame(writer, content_frame(None))
                write_done(writer)
            else:
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


def serve_in_background() -> int:
    """Start the scripted server in a thread of its own; its port."""
    ready = threading.Event()
    port: list[int] = []

    def run() -> None:
        loop = asyncio.new_event_loop()
        server = loop.run_until_complete(asyncio.start_server(_handle, "127.0.0.1", 0))
        port.append(server.sockets[0].getsockname()[1])
        ready.set()
        loop.run_forever()

    threading.Thread(target=run, daemon=True).start()
    ready.wait(10)
    return port[0]


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "openvaala_server", *args]


def one_run(port: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="ovbench-setup-") as tmp:
        root = Path(tmp)
        env = dict(os.environ)
        env.update(OPENVAALA_HOME=str(root / "home"), OPENVAALA_CONFIG=str(root / "config.toml"))
        (root / "work").mkdir()
        base_url = f"http://127.0.0.1:{port}/v1"
        started = time.perf_counter()
        setup = subprocess.run(
            command(
                "setup",
                "--provider",
                "compatible",
                "--base-url",
                base_url,
                "--model",
                MODEL,
                "--api-key-stdin",
            ),
            input=KEY,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        set_up = time.perf_counter()
        if setup.returncode != 0:
            raise SystemExit(f"setup failed: {setup.stderr}")
        try:
            answer = subprocess.run(
                command("exec", "hello"),
                env=env,
                cwd=root / "work",
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            answered = time.perf_counter()
            if answer.returncode != 0 or "ready" not in answer.stdout:
                raise SystemExit(f"exec failed: {answer.stderr}")
        finally:
            subprocess.run(command("serve", "stop"), env=env, capture_output=True, timeout=60)
        return set_up - started, answered - set_up


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    port = serve_in_background()
    runs = [one_run(port) for _ in range(args.runs)]
    setups = [s for s, _ in runs]
    turns = [t for _, t in runs]
    totals = [s + t for s, t in runs]
    print(f"runs: {args.runs} (fresh config and data directories each)")
    for name, values in (("setup", setups), ("first turn", turns), ("total", totals)):
        print(
            f"{name:>10}: median {statistics.median(values):.2f} s "
            f"(min {min(values):.2f}, max {max(values):.2f})"
        )


if __name__ == "__main__":
    main()
