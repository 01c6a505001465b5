"""Shared helpers for the benchmarks: a real OpenVaala daemon in its own process, raw clients.

The daemon runs as ``python -m openvaala_server serve --port 0`` would (same code path, same
uvicorn settings), with a temporary ``OPENVAALA_HOME`` and ``OPENVAALA_CONFIG``. It is started
through a tiny bootstrap so a benchmark may ask for one thing the product does not do itself:
timestamp every event as the hub numbers it (``emit_log=``). The hook wraps ``Hub.publish`` and
appends ``(conversationId, seq, t_before, t_after)`` with ``time.perf_counter()`` — on Linux that
is ``CLOCK_MONOTONIC``, one clock for every process, so the benchmark can subtract an emit time
taken in the daemon from a receipt time taken in its own process. The log is written when the
daemon exits. It costs well under a microsecond per event. With ``OPENVAALA_BENCH_PROFILE=path``
in the environment the daemon also runs under cProfile and writes its stats there on exit.

Not a test helper: nothing here imports from ``tests/``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
from websockets.asyncio.client import ClientConnection, connect

DEMO_CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0
context_window = 1000000
max_output_tokens = 8000

[agents.default]
description = "General assistant"
model = "demo"
"""

_BOOT = r"""
import atexit, os, sys, time
path = os.environ.get("OPENVAALA_BENCH_EMIT_LOG")
if path:
    from openvaala_server.runtime import hub as _hub
    _original = _hub.Hub.publish
    _log = []
    _clock = time.perf_counter
    def publish(self, method, params):
        before = _clock()
        seq = _original(self, method, params)
        _log.append((self.conversation_id, seq, before, _clock()))
        return seq
    _hub.Hub.publish = publish
    def _dump():
        import json
        with open(path, "w") as f:
            json.dump(_log, f)
    atexit.register(_dump)
gc_path = os.environ.get("OPENVAALA_BENCH_GC_LOG")
if gc_path:
    # How long each of the daemon's garbage collections stopped it (ms), and which generation.
    import gc
    _gc_pauses, _gc_start = [], [0.0]
    def _on_gc(phase, info):
        if phase == "start":
            _gc_start[0] = time.perf_counter()
        else:
            _gc_pauses.append(((time.perf_counter() - _gc_start[0]) * 1000, info["generation"]))
    gc.callbacks.append(_on_gc)
    def _dump_gc():
        import json
        with open(gc_path, "w") as f:
            json.dump(_gc_pauses, f)
    atexit.register(_dump_gc)
slow_path = os.environ.get("OPENVAALA_BENCH_SLOW_LOG")
if slow_path:
    # Every event-loop callback that held the loop over 5 ms: how long, and what it ran.
    import asyncio.events as _events
    _run, _slow = _events.Handle._run, []
    def _timed_run(self):
        t = time.perf_counter()
        _run(self)
        took = time.perf_counter() - t
        if took > 0.005:
            what = repr(self)[:200]
            task = getattr(self._callback, "__self__", None)
            coro = task.get_coro() if hasattr(task, "get_coro") else None
            if coro is not None:  # the task's coroutine and where it waits now
                chain = []
                while coro is not None and hasattr(coro, "cr_code"):
                    frame = coro.cr_frame
                    chain.append(f"{coro.cr_code.co_qualname}:{frame.f_lineno if frame else '-'}")
                    coro = coro.cr_await
                what = " > ".join(chain)[:400]
            _slow.append((took * 1000, what))
    _events.Handle._run = _timed_run
    def _dump_slow():
        import json
        with open(slow_path, "w") as f:
            json.dump(_slow, f)
    atexit.register(_dump_slow)
calls = os.environ.get("OPENVAALA_BENCH_CALL_LOG")
if calls:
    # When each model call starts (`TurnRunner._call_model`: the threshold check, the request's
    # assembly and encoding follow) and when its body has been built (`http.sse_events`).
    from openvaala_server.runtime import turn as _turn
    _call = _turn.TurnRunner._call_model
    from openvaala_server.models import http as _http
    _sse = _http.sse_events
    _starts, _built = [], []
    async def _call_model(self):
        _starts.append(time.perf_counter())
        return await _call(self)
    def sse_events(*args, **kwargs):  # called with the request's body built
        _built.append(time.perf_counter())
        return _sse(*args, **kwargs)
    _turn.TurnRunner._call_model = _call_model
    _http.sse_events = sse_events
    def _dump_calls():
        import json
        with open(calls, "w") as f:
            json.dump([_starts, _built], f)
    atexit.register(_dump_calls)
heap_path = os.environ.get("OPENVAALA_BENCH_HEAP_LOG")
if heap_path:
    # The Python heap by line, written at each SIGUSR2 to `path.N` (bench/memory_breakdown.py).
    import json, signal, tracemalloc
    tracemalloc.start(1)
    _heaps = [0]
    def _dump_heap(signum, frame):
        stats = tracemalloc.take_snapshot().statistics("lineno")
        rows = [(str(s.traceback[0]), s.size, s.count) for s in stats]
        _heaps[0] += 1
        path = f"{heap_path}.{_heaps[0]}"
        with open(path + ".tmp", "w") as f:
            json.dump(rows, f)
        os.replace(path + ".tmp", path)
    signal.signal(signal.SIGUSR2, _dump_heap)
from openvaala_server.cli import main
profile = os.environ.get("OPENVAALA_BENCH_PROFILE")
if profile:
    import cProfile
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        code = main(["serve", "--port", "0"])
    finally:
        profiler.disable()
        profiler.dump_stats(profile)
    sys.exit(code)
sys.exit(main(["serve", "--port", "0"]))
"""


def check_clock() -> None:
    info = time.get_clock_info("perf_counter")
    if "CLOCK_MONOTONIC" not in info.implementation:
        sys.exit(
            f"perf_counter is {info.implementation}: cross-process latency needs a shared clock"
        )


class BenchDaemon:
    def __init__(
        self,
        config: str = DEMO_CONFIG,
        *,
        home: Path | None = None,
        emit_log: bool = False,
        call_log: bool = False,
        gc_log: bool = False,
        slow_log: bool = False,
        heap_log: bool = False,
    ) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="ovbench-")
        root = Path(self._tmp.name)
        self.home = home or root / "home"
        self.config_path = root / "config.toml"
        self.config_path.write_text(config)
        self.workdir = root / "work"
        self.workdir.mkdir()
        self.emit_log_path = root / "emits.json" if emit_log else None
        self.call_log_path = root / "calls.json" if call_log else None
        self.gc_log_path = root / "gc.json" if gc_log else None
        self.slow_log_path = root / "slow.json" if slow_log else None
        self.heap_log_path = root / "heap.json" if heap_log else None
        self.process: subprocess.Popen[bytes] | None = None
        self.address = ""
        self.token = ""
        self.log_path = root / "server.log"

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["OPENVAALA_HOME"] = str(self.home)
        env["OPENVAALA_CONFIG"] = str(self.config_path)
        if self.emit_log_path is not None:
            env["OPENVAALA_BENCH_EMIT_LOG"] = str(self.emit_log_path)
        if self.call_log_path is not None:
            env["OPENVAALA_BENCH_CALL_LOG"] = str(self.call_log_path)
        if self.gc_log_path is not None:
            env["OPENVAALA_BENCH_GC_LOG"] = str(self.gc_log_path)
        if self.slow_log_path is not None:
            env["OPENVAALA_BENCH_SLOW_LOG"] = str(self.slow_log_path)
        if self.heap_log_path is not None:
            env["OPENVAALA_BENCH_HEAP_LOG"] = str(self.heap_log_path)
        return env

    def start(self, timeout: float = 60, answered: Callable[[], None] | None = None) -> BenchDaemon:
        """Spawn the daemon and return once it is ready; `answered()` is called at its first
        `/healthz` answer."""
        from openvaala_server.store.lock import is_locked, read_lock
        from openvaala_server.store.paths import DataDir

        data_dir = DataDir(self.home)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _BOOT],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daemon exited at start:\n{self.log()}")
            info = read_lock(data_dir.lock_path) if is_locked(data_dir.lock_path) else None
            if info and info.address and data_dir.token_path.exists():
                self.address = info.address
                self.token = data_dir.token_path.read_text().strip()
                try:
                    health = httpx.get(f"http://{self.address}/healthz", timeout=1)
                except httpx.HTTPError:
                    health = None
                if health is not None and health.status_code == 200:
                    if answered is not None:
                        answered()
                        answered = None
                    # It answers before its runtime is built; `/ready` waits for that
                    # (docs/protocol.md). Without `ready` in the answer: an older daemon, which
                    # answers only once ready (another tree's, through PYTHONPATH).
                    if "ready" not in health.json():
                        return self
                    from openvaala_server.daemon_spawn import ready

                    if ready(self.address, self.token, deadline - time.monotonic()):
                        return self
            time.sleep(0.005)
        raise RuntimeError(f"daemon did not start in {timeout} s:\n{self.log()}")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def emits(self) -> list[tuple[str, int, float, float]]:
        """(conversationId, seq, t_before_publish, t_after_publish); after `stop()`."""
        assert self.emit_log_path is not None
        return [tuple(row) for row in json.loads(self.emit_log_path.read_text())]

    def call_times(self) -> tuple[list[float], list[float]]:
        """`perf_counter()` as each model call started and as its body was built (`call_log=True`);
        after `stop()`."""
        assert self.call_log_path is not None
        starts, built = json.loads(self.call_log_path.read_text())
        return [float(t) for t in starts], [float(t) for t in built]

    def gc_pauses(self) -> list[tuple[float, int]]:
        """How long each garbage collection in the daemon took (ms) and of which generation
        (`gc_log=True`); after `stop()`."""
        assert self.gc_log_path is not None
        return [(float(t), int(g)) for t, g in json.loads(self.gc_log_path.read_text())]

    def slow_callbacks(self) -> list[tuple[float, str]]:
        """Event-loop callbacks that ran over 5 ms: (ms, what) (`slow_log=True`); after
        `stop()`."""
        assert self.slow_log_path is not None
        return [(float(t), str(what)) for t, what in json.loads(self.slow_log_path.read_text())]

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-5000:]
        except OSError:
            return ""

    def cleanup(self) -> None:
        self.stop()
        self._tmp.cleanup()

    def __enter__(self) -> BenchDaemon:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


class RawClient:
    """A bare JSON-RPC client on one websocket: requests are awaited by reading frames in line,
    so a benchmark controls exactly when (and how cheaply) notifications are read."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._next = 0

    @classmethod
    async def connect(cls, address: str, token: str, name: str = "bench") -> RawClient:
        ws = await connect(
            f"ws://{address}/ws",
            additional_headers={"Authorization": f"Bearer {token}"},
            max_size=None,
            open_timeout=30,
            proxy=None,  # as the client library connects (openvaala_server/client/connection.py)
            compression=None,
        )
        client = cls(ws)
        await client.request(
            "initialize", {"clientInfo": {"name": name, "version": "0"}, "protocolVersion": 1}
        )
        return client

    async def send(self, method: str, params: dict[str, Any]) -> int:
        self._next += 1
        frame = {"jsonrpc": "2.0", "id": self._next, "method": method, "params": params}
        await self.ws.send(orjson.dumps(frame).decode())
        return self._next

    async def wait_result(self, msg_id: int) -> Any:
        while True:
            message = orjson.loads(await self.ws.recv())
            if message.get("id") == msg_id:
                if "error" in message:
                    raise RuntimeError(f"rpc error: {message['error']}")
                return message["result"]

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        return await self.wait_result(await self.send(method, params))

    async def close(self) -> None:
        await self.ws.close()


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]
