"""A fake model provider: a real HTTP/1.1 server on 127.0.0.1 speaking all three wire formats.

    with FakeProvider(api_key="sk-test") as fake:
        fake.enqueue(Reply().text("Hello"))
        config = fake.model_config("anthropic")          # a ModelConfig pointed at the fake
        ...
        assert fake.last_request.json["messages"][0]["role"] == "user"

Endpoints (any path prefix works, so `base_url` may be `fake.url` or `fake.url + "/v1"`):

- ``POST .../chat/completions`` -> OpenAI Chat Completions SSE (`provider = "openai"`)
- ``POST .../responses``        -> Responses API SSE (`provider = "openai_responses"`)
- ``POST .../messages``         -> Anthropic Messages SSE (`provider = "anthropic"`)

The server runs its own event loop in a background thread, so it behaves the same for sync
tests, async tests (a stalled test loop cannot stall it) and a daemon in another process (point
its config at `fake.url`; `fake.config_toml()` and `fake.env` help). It is a minimal hand-written
HTTP server rather than uvicorn because tests need what frameworks hide: resetting a connection
mid-body (`Reply.drop()`), and seeing exactly when the client hung up (`RecordedRequest.
disconnected`).

Scripting: `enqueue(reply, when=...)` queues replies; each request takes the first queued reply
whose `when(request)` is true (or that has no `when`). With none left, `default_reply` is used if
set, else the request fails with a 400 naming the problem (so a test fails loudly, not by retrying).

Authentication: with `api_key` set, a request without it (Bearer for OpenAI paths, `x-api-key`
for Anthropic) gets 401 — and, deliberately, the error message echoes the key it received in
full, so tests can check that clients never repeat what a provider echoes.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openvaala_server.config import ModelConfig
from tests.fakes.script import Delay, Drop, EndStream, HttpError, Reply, Wait
from tests.fakes.wire import ANTHROPIC, CHAT, RENDERERS, RESPONSES, WIRES, Ids, Renderer
from tests.support.waits import WAIT_S

API_KEY_ENV = "OPENVAALA_FAKE_PROVIDER_KEY"
_MAX_BODY = 64 * 1024 * 1024


@dataclass
class RecordedRequest:
    """One request the fake received; `json` is the parsed body (None if it was not JSON)."""

    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    wire: str | None  # "openai" | "openai_responses" | "anthropic" | None (unknown path)
    received_at: float = field(default_factory=time.monotonic)
    status: int | None = None  # the status the fake answered with
    finished: threading.Event = field(default_factory=threading.Event, repr=False)
    disconnected: threading.Event = field(default_factory=threading.Event, repr=False)

    # The waits below block a worker thread on a threading.Event, which `asyncio.timeout` could not
    # interrupt; an explicit timeout keeps a failing test from leaking that thread forever.

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    async def wait_disconnected(self, timeout: float = WAIT_S) -> bool:
        """Whether the client closed the connection before the response was complete."""
        return await asyncio.to_thread(self.disconnected.wait, timeout)

    async def wait_finished(self, timeout: float = WAIT_S) -> bool:
        """Whether the fake sent the whole response (or dropped it on purpose)."""
        return await asyncio.to_thread(self.finished.wait, timeout)


Matcher = Callable[[RecordedRequest], bool]


@dataclass
class FakeConnection:
    """One TCP connection a client opened to the fake; `closed` is set when it ended."""

    port: int  # the client's port, which tells connections apart
    requests: int = 0
    closed: threading.Event = field(default_factory=threading.Event, repr=False)

    async def wait_closed(self, timeout: float = WAIT_S) -> bool:
        return await asyncio.to_thread(self.closed.wait, timeout)


@dataclass
class _Scripted:
    reply: Reply
    when: Matcher | None


class FakeProvider:
    def __init__(self, *, api_key: str | None = "sk-fake-test-key", wire: str = CHAT) -> None:
        if wire not in WIRES:
            raise ValueError(f"wire must be one of {WIRES}")
        self.api_key = api_key
        self.wire = wire  # the default for model_config()/config_toml()
        self.default_reply: Reply | None = None
        self._script: list[_Scripted] = []
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._new_request = threading.Condition(self._lock)
        self._ids = Ids()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.connections: list[FakeConnection] = []  # every connection accepted, in order
        self.port = 0
        # Plain JSON answers by (method, path): what a server says besides streaming replies
        # (`GET /v1/models`, Ollama's `POST /api/show`, llama.cpp's `GET /props`, ...).
        self.json_routes: dict[tuple[str, str], Any] = {}

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeProvider:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._handle, "127.0.0.1", 0)
                )
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:  # report to the starting thread, then give up
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="fake-provider", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        future = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
        with contextlib.suppress(Exception):
            future.result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._loop = self._thread = None

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        # A connection accepted just before the close may not have started its handler yet:
        # let it start, then close it too, so no socket outlives the fake (ResourceWarning).
        for _ in range(3):
            await asyncio.sleep(0)
            for writer in list(self._writers):
                writer.transport.abort()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
        # `abort()` closes the socket in a callback of the next loop iterations: run them.
        for _ in range(3):
            await asyncio.sleep(0)

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses and configs -------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def base_url(self, wire: str | None = None) -> str:
        """The `base_url` a provider of `wire` is configured with (Anthropic adds /v1 itself)."""
        return self.url if (wire or self.wire) == ANTHROPIC else f"{self.url}/v1"

    @property
    def env(self) -> dict[str, str]:
        """Environment a daemon process needs to authenticate against the fake."""
        return {API_KEY_ENV: self.api_key} if self.api_key else {}

    def model_config(self, wire: str | None = None, **overrides: Any) -> ModelConfig:
        wire = wire or self.wire
        values: dict[str, Any] = {
            "name": f"fake-{wire}",
            "provider": wire,
            "model": "fake-model",
            "context_window": 32_000,
            "max_output_tokens": 1_000,
            "base_url": self.base_url(wire),
            "api_key_env": API_KEY_ENV if self.api_key else None,
        }
        values.update(overrides)
        return ModelConfig(**values)

    def config_toml(self, name: str = "fake", wire: str | None = None, **extra: Any) -> str:
        """A `[models.<name>]` table for a daemon's config.toml pointing at this fake."""
        wire = wire or self.wire
        values: dict[str, Any] = {
            "provider": wire,
            "model": "fake-model",
            "base_url": self.base_url(wire),
            "context_window": 32_000,
            "max_output_tokens": 1_000,
        }
        if self.api_key:
            values["api_key_env"] = API_KEY_ENV
        values.update(extra)
        lines = [f"[models.{name}]"] + [f"{k} = {json.dumps(v)}" for k, v in values.items()]
        return "\n".join(lines) + "\n"

    # -- scripting and inspection -----------------------------------------------------------
    def enqueue(self, *replies: Reply, when: Matcher | None = None) -> None:
        with self._lock:
            self._script.extend(_Scripted(reply, when) for reply in replies)

    @property
    def pending(self) -> int:
        """Scripted replies not yet consumed."""
        with self._lock:
            return len(self._script)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def last_request(self) -> RecordedRequest:
        with self._lock:
            if not self._requests:
                raise AssertionError("the fake provider has received no request")
            return self._requests[-1]

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self._requests.clear()

    def wait_for_request_sync(self, count: int = 1, timeout: float = WAIT_S) -> RecordedRequest:
        """Block until `count` requests arrived in total; returns the `count`-th."""
        deadline = time.monotonic() + timeout
        with self._new_request:
            while len(self._requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"fake provider got {len(self._requests)} of {count}")
                self._new_request.wait(left)
            return self._requests[count - 1]

    async def wait_for_request(self, count: int = 1, timeout: float = WAIT_S) -> RecordedRequest:
        return await asyncio.to_thread(self.wait_for_request_sync, count, timeout)

    def _take(self, request: RecordedRequest) -> Reply | None:
        with self._lock:
            for index, entry in enumerate(self._script):
                if entry.when is None or entry.when(request):
                    del self._script[index]
                    return entry.reply
            return self.default_reply

    def _record(self, request: RecordedRequest) -> None:
        with self._new_request:
            self._requests.append(request)
            self._new_request.notify_all()

    # -- HTTP ------------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        peer = writer.get_extra_info("peername")
        connection = FakeConnection(peer[1] if isinstance(peer, tuple) else 0)
        with self._lock:
            self.connections.append(connection)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                connection.requests += 1
                self._record(request)
                if not await self._respond(request, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        except asyncio.CancelledError:
            # Only `stop()` cancels these tasks. Ending normally matters: on Python 3.11 asyncio
            # logs a spurious traceback for a cancelled connection task.
            pass
        finally:
            self._writers.discard(writer)
            self._tasks.discard(task)
            writer.close()
            connection.closed.set()

    async def _respond(
        self, request: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; False when the connection must not be reused."""
        route = (request.method, request.path.split("?", 1)[0])
        if route in self.json_routes:
            problem = self._check_key(request)
            if problem is not None:  # as the real servers do: listings need the key too
                refused = {"message": problem, "type": "invalid_request_error"}
                await _send_json(writer, request, 401, {"error": refused})
            else:
                answer = self.json_routes[route]
                # A callable answers from the request's JSON (a tokenizer, a template).
                body = answer(request.json) if callable(answer) else answer
                await _send_json(writer, request, 200, body)
            return True
        if request.wire is None or request.method != "POST":
            await _send_json(writer, request, 404, {"error": {"message": "no such endpoint"}})
            return True
        renderer_type = RENDERERS[request.wire]
        key_problem = self._check_key(request)
        if key_problem is not None:
            renderer = renderer_type(Reply(), request.json, self._ids)
            body = renderer.error_body(HttpError(401, key_problem, code="invalid_api_key"))
            await _send_json(writer, request, 401, body)
            return True
        reply = self._take(request)
        if reply is None:
            reply = Reply.bad_request(
                f"fake provider: no scripted reply left for {request.method} {request.path}"
            )
        renderer = renderer_type(reply, request.json, self._ids)
        if reply.error is not None:
            error = reply.error
            if error.body is not None:
                payload: Any = error.body
            else:
                payload = renderer.error_body(error)
            await _send_json(writer, request, error.status, payload, dict(error.headers))
            return True
        return await self._stream(request, renderer, reader, writer)

    def _check_key(self, request: RecordedRequest) -> str | None:
        if not self.api_key:
            return None
        # Anthropic's own routes (its model listing too) take the key in x-api-key.
        if request.wire == ANTHROPIC or (request.wire is None and self.wire == ANTHROPIC):
            given = request.headers.get("x-api-key", "")
        else:
            given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if given == self.api_key:
            return None
        return f"Incorrect API key provided: {given}" if given else "Missing API key"

    async def _stream(
        self,
        request: RecordedRequest,
        renderer: Renderer,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        request.status = 200
        writer.write(
            b"HTTP/1.1 200 OK\r\n"
            b"Content-Type: text/event-stream; charset=utf-8\r\n"
            b"Cache-Control: no-cache\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        sender = asyncio.create_task(_send_frames(renderer, writer))
        # httpx never pipelines, so any read while we stream can only be the client hanging up.
        watcher = asyncio.create_task(reader.read(1))
        try:
            done, _ = await asyncio.wait({sender, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sender, watcher):
                task.cancel()
            await asyncio.gather(sender, watcher, return_exceptions=True)
        if sender in done and sender.exception() is None:
            request.finished.set()
            if sender.result() == "dropped":
                writer.transport.abort()
                return False
            return True
        request.disconnected.set()
        return False


async def _send_frames(renderer: Renderer, writer: asyncio.StreamWriter) -> str:
    for frame in renderer.frames():
        if isinstance(frame, bytes):
            writer.write(f"{len(frame):X}\r\n".encode() + frame + b"\r\n")
            await writer.drain()
        elif isinstance(frame, Wait):
            await frame.gate.wait()
        elif isinstance(frame, Delay):
            await asyncio.sleep(frame.seconds)
        elif isinstance(frame, Drop):
            return "dropped"
        elif isinstance(frame, EndStream):
            break
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    return "complete"


async def _send_json(
    writer: asyncio.StreamWriter,
    request: RecordedRequest,
    status: int,
    payload: Any,
    headers: dict[str, str] | None = None,
) -> None:
    body = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = {529: "Overloaded"}.get(status, "Error")
    head = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json"]
    head += [f"{name}: {value}" for name, value in (headers or {}).items()]
    head.append(f"Content-Length: {len(body)}")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
    await writer.drain()
    request.status = status
    request.finished.set()


def _wire_for(path: str) -> str | None:
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/chat/completions"):
        return CHAT
    if path.endswith("/responses"):
        return RESPONSES
    if path.endswith("/messages"):
        return ANTHROPIC
    return None


async def _read_request(reader: asyncio.StreamReader) -> RecordedRequest | None:
    line = await reader.readline()
    if not line:
        return None
    method, path, _version = line.decode("latin-1").strip().split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        raw = await reader.readline()
        if raw in (b"\r\n", b"\n", b""):
            break
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(reader)
    else:
        length = int(headers.get("content-length", "0"))
        if length > _MAX_BODY:
            raise ValueError("request body too large")
        body = await reader.readexactly(length)
    return RecordedRequest(method, path, headers, body, _wire_for(path))


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)
