"""Scripted replies for the fake provider server: what one model call should stream back.

A `Reply` is wire-neutral: the server renders it as OpenAI Chat Completions, Responses or
Anthropic Messages SSE depending on the endpoint that was called, so one script serves all three.

    Reply().text("Hel", "lo")                           # two text chunks, then the final events
    Reply().reasoning("Thinking...").text("Done")         # reasoning, then text
    Reply().tool_call("read_file", {"path": "a.txt"})   # one call
    Reply().tool_call("a", {}).tool_call("b", {})       # two parallel calls in one response
    Reply().text("a").wait(gate).text("b")              # stall until the test opens `gate`
    Reply().text("partial").drop()                      # connection reset mid-stream
    Reply().text("partial").hang()                      # never finishes (until disconnected)
    Reply.rate_limited(retry_after=2)                   # 429 with Retry-After: 2
    Reply.error(500) / Reply.unauthorized() / Reply.context_overflow() / Reply.overloaded()

Every chunk is its own SSE event written and flushed separately, so a client sees them one by
one; `wait(gate)` between chunks lets a test release a stream step by step.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.support.waits import WAIT_S


class Gate:
    """A latch a test opens to let a stalled scripted stream continue.

    Thread-safe and loop-agnostic: the fake server waits on it in its own thread's event loop;
    a test (sync or async, or another thread) calls `open()`.
    """

    def __init__(self) -> None:
        self._flag = threading.Event()
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._reached = threading.Event()

    def open(self) -> None:
        with self._lock:
            self._flag.set()
            waiters, self._waiters = self._waiters, []
        for loop, event in waiters:
            # RuntimeError: that loop is closed, so nobody is waiting there any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(event.set)

    @property
    def is_open(self) -> bool:
        return self._flag.is_set()

    @property
    def reached(self) -> bool:
        """Whether a stream has arrived at this gate (everything before it has been sent)."""
        return self._reached.is_set()

    async def wait_reached(self, timeout: float = WAIT_S) -> bool:
        """For tests: wait until the server has streamed everything before this gate."""
        return await asyncio.to_thread(self._reached.wait, timeout)

    async def wait(self) -> None:
        """Used by the server: block the stream until `open()`."""
        with self._lock:
            self._reached.set()
            if self._flag.is_set():
                return
            event = asyncio.Event()
            entry = (asyncio.get_running_loop(), event)
            self._waiters.append(entry)
        try:
            await event.wait()
        finally:
            with self._lock:
                if entry in self._waiters:
                    self._waiters.remove(entry)


# --- Steps ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    chunks: tuple[str, ...]


@dataclass(frozen=True)
class Reasoning:
    chunks: tuple[str, ...]
    # Anthropic signature / Responses encrypted_content; generated when None.
    opaque: str | None = None


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] | str  # a str is sent verbatim (e.g. to script invalid JSON)
    call_id: str | None = None
    chunks: int = 2  # how many fragments the arguments JSON is split into
    # Stall after the call's head and its first fragment until the test opens it: the model is
    # still writing the arguments.
    pause: Gate | None = None


@dataclass(frozen=True)
class Wait:
    gate: Gate


@dataclass(frozen=True)
class Delay:
    seconds: float


@dataclass(frozen=True)
class Drop:
    """Abort the TCP connection (a reset) without finishing the HTTP body."""


@dataclass(frozen=True)
class EndStream:
    """Finish the HTTP body cleanly here, leaving out the wire format's final events."""


@dataclass(frozen=True)
class StreamError:
    """An error reported inside the 200 stream (Anthropic `error`, Responses `response.failed`,
    Chat `data: {"error": ...}`). kind: "overloaded" | "server_error" | "context_overflow"."""

    kind: str = "overloaded"
    message: str | None = None


@dataclass(frozen=True)
class RawEvent:
    """One SSE event sent verbatim: `data` is a JSON-able value or an already encoded string."""

    data: Any
    event: str | None = None


Step = Text | Reasoning | ToolCall | Wait | Delay | Drop | EndStream | StreamError | RawEvent
CONTROL_STEPS = (Wait, Delay)


@dataclass(frozen=True)
class HttpError:
    status: int
    message: str | None = None
    code: str | None = None
    error_type: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    context_overflow: bool = False
    body: str | None = None  # sent verbatim when given


@dataclass
class Reply:
    """One scripted model response. Builder methods return `self` for chaining."""

    steps: list[Step] = field(default_factory=list)
    error: HttpError | None = None
    usage_tokens: tuple[int, int, int] | None = None  # input, output, cached input
    # False: a server that never reports usage, even when asked (Chat Completions only; an older
    # llama.cpp server, for example).
    reports_usage: bool = True
    stop: str | None = None  # "stop" | "tool_calls" | "max_tokens"; derived when None
    # Responses only: the reasoning.context the fake claims to have applied (echoed in the
    # response object); by default it echoes the request's `reasoning` object.
    applied_reasoning_context: str | None = None

    # -- content
    def text(self, *chunks: str) -> Reply:
        self.steps.append(Text(tuple(chunks)))
        return self

    def reasoning(self, *chunks: str, opaque: str | None = None) -> Reply:
        self.steps.append(Reasoning(tuple(chunks), opaque))
        return self

    def tool_call(
        self,
        name: str,
        arguments: dict[str, Any] | str | None = None,
        *,
        call_id: str | None = None,
        chunks: int = 2,
        pause: Gate | None = None,
    ) -> Reply:
        """A function call; several in one reply are parallel calls of one response. `pause`:
        stall after its first arguments fragment until the gate opens."""
        arguments = {} if arguments is None else arguments
        self.steps.append(ToolCall(name, arguments, call_id, chunks, pause))
        return self

    def raw(self, data: Any, event: str | None = None) -> Reply:
        self.steps.append(RawEvent(data, event))
        return self

    # -- timing and failure
    def wait(self, gate: Gate) -> Reply:
        self.steps.append(Wait(gate))
        return self

    def delay(self, seconds: float) -> Reply:
        self.steps.append(Delay(seconds))
        return self

    def hang(self) -> Reply:
        """Stall forever: the stream only ends when the client disconnects or the fake stops."""
        self.steps.append(Wait(Gate()))
        return self

    def drop(self) -> Reply:
        self.steps.append(Drop())
        return self

    def end_stream(self) -> Reply:
        self.steps.append(EndStream())
        return self

    def stream_error(self, kind: str = "overloaded", message: str | None = None) -> Reply:
        self.steps.append(StreamError(kind, message))
        return self

    # -- final events
    def without_usage(self) -> Reply:
        self.reports_usage = False
        return self

    def usage(self, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0) -> Reply:
        self.usage_tokens = (input_tokens, output_tokens, cached_input_tokens)
        return self

    def stop_reason(self, reason: str) -> Reply:
        self.stop = reason
        return self

    def reasoning_context(self, applied: str) -> Reply:
        self.applied_reasoning_context = applied
        return self

    # -- HTTP errors (no stream at all)
    @classmethod
    def http_error(
        cls,
        status: int,
        message: str | None = None,
        *,
        code: str | None = None,
        error_type: str | None = None,
        headers: dict[str, str] | None = None,
        body: str | None = None,
    ) -> Reply:
        """An error status with the wire format's error body (or `body` verbatim)."""
        return cls(
            error=HttpError(
                status, message, code, error_type, tuple((headers or {}).items()), body=body
            )
        )

    @classmethod
    def rate_limited(cls, retry_after: float | str | None = 1) -> Reply:
        """429; `retry_after` seconds (or an HTTP-date string) in the Retry-After header."""
        headers = {} if retry_after is None else {"Retry-After": _header_value(retry_after)}
        return cls.http_error(
            429, "Rate limit reached", code="rate_limit_exceeded", headers=headers
        )

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        return cls.http_error(status, "The server had an error while processing your request")

    @classmethod
    def unauthorized(cls, message: str = "Invalid API key") -> Reply:
        return cls.http_error(401, message, code="invalid_api_key")

    @classmethod
    def not_found(cls) -> Reply:
        return cls.http_error(404, "The model does not exist", code="model_not_found")

    @classmethod
    def bad_request(cls, message: str = "Invalid request") -> Reply:
        return cls.http_error(400, message)

    @classmethod
    def context_overflow(cls) -> Reply:
        """400 with each wire format's own "prompt too long" body."""
        return cls(error=HttpError(400, context_overflow=True))

    @classmethod
    def overloaded(cls) -> Reply:
        """529 `overloaded_error` (Anthropic's status; OpenAI formats get the same status)."""
        return cls.http_error(529, "Overloaded", error_type="overloaded_error")


def _header_value(value: float | str) -> str:
    if isinstance(value, str):
        return value
    return str(int(value)) if float(value).is_integer() else str(value)
