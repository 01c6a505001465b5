"""Shared plumbing for the HTTP model providers: keys, SSE streaming, error mapping, history prep.

Every provider funnels its request through `sse_events`, so transport failures, HTTP error statuses
and provider error bodies become the same stable `ModelError` kinds everywhere:

- ``provider_unavailable`` (retryable): connection refused/reset, timeouts, a stream that ends
  before its final event, 429, 5xx, Anthropic ``overloaded_error``. ``retry_after`` comes from the
  ``Retry-After`` header (seconds or HTTP-date).
- ``auth_failed`` (401/403, or the key's environment variable unset), ``model_not_found`` (404),
  ``bad_request`` (other 4xx), ``context_overflow`` (the prompt does not fit the model): never
  retryable — repeating the same request cannot succeed.

The API key never reaches a message: `redact` scrubs it from anything a provider echoes back.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, aclosing
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Final, Generic, TypeVar, cast
from urllib.parse import urlsplit

from openvaala_server.config import ModelConfig
from openvaala_server.domain.records import (
    AGENT_MESSAGE,
    COMPLETED,
    FAILED,
    INTERRUPTED,
    NOTICE,
    REASONING,
    TOOL_CALL,
    TOOL_RESULT,
    USER_MESSAGE,
    Item,
)
from openvaala_server.models.base import ModelError, ModelEvent
from openvaala_server.models.connect_errors import connect_mistake
from openvaala_server.models.http_client import DEFAULT_READ_S, KeptClient
from openvaala_server.models.stream import StreamParser
from openvaala_server.protocol import codec
from openvaala_server.protocol.json_types import JsonMapping, JsonObject

if TYPE_CHECKING:
    import httpx
    from httpx_sse import EventSource, ServerSentEvent

PROVIDER_UNAVAILABLE = "provider_unavailable"
AUTH_FAILED = "auth_failed"
MODEL_NOT_FOUND = "model_not_found"
BAD_REQUEST = "bad_request"
CONTEXT_OVERFLOW = "context_overflow"


# How long to wait for the end of a response body after its final event (see `_drain`).
DRAIN_S = 1.0

# Phrases by which providers (and OpenAI-compatible servers without error codes) say the prompt
# does not fit the model's context window.
_OVERFLOW_PHRASES = (
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "prompt is too long",
    "too many tokens",
)


@dataclass(frozen=True)
class Endpoint:
    """Who we talk to, for messages a person understands ("OpenAI said 401 ...")."""

    label: str  # "OpenAI", "Anthropic", "the OpenAI-compatible server at localhost:11434"
    config: ModelConfig
    secret: str | None  # the API key, only so that it can be scrubbed from messages

    def redact(self, text: str) -> str:
        return redact(text, self.secret)


def redact(text: str, secret: str | None) -> str:
    if secret and len(secret) >= 4:
        text = text.replace(secret, "[redacted]")
    return text


def api_key(config: ModelConfig, label: str) -> str | None:
    """The key from the environment variable or the key file the config names; `None` when it
    names neither."""
    if config.api_key_file:
        return _key_from_file(config, label, config.api_key_file)
    if not config.api_key_env:
        return None
    value = os.environ.get(config.api_key_env, "").strip()
    if not value:
        raise ModelError(
            AUTH_FAILED,
            f"{label} needs an API key: set the environment variable {config.api_key_env} "
            f"(named by api_key_env of model {config.name!r}) for the OpenVaala server",
        )
    return value


def _key_from_file(config: ModelConfig, label: str, file: str) -> str:
    # A few bytes of a local file: read at every call, so a key replaced by `openvaala setup`
    # is used from the next call on.
    try:
        value = Path(file).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(
            AUTH_FAILED,
            f"{label} needs an API key: cannot read {file} (api_key_file of [models."
            f"{config.name}]): {type(exc).__name__}; run `openvaala setup` again",
        ) from None
    if not value:
        raise ModelError(
            AUTH_FAILED,
            f"{label} needs an API key: {file} (api_key_file of model {config.name!r}) is empty",
        )
    return value


def host_label(base_url: str) -> str:
    parts = urlsplit(base_url)
    return parts.netloc or base_url


def extra_headers(config: ModelConfig) -> dict[str, str]:
    """`headers = {...}` in a model's options, e.g. for a proxy; values must be strings."""
    raw = config.options.get("headers")
    if not isinstance(raw, dict):
        return {}
    return {str(k): str(v) for k, v in raw.items()}


def read_timeout_s(config: ModelConfig) -> float:
    """The longest silence allowed in a response: the model's `read_timeout_s`, or 300 s."""
    read = config.options.get("read_timeout_s")
    if isinstance(read, int | float) and not isinstance(read, bool) and read > 0:
        return float(read)
    return DEFAULT_READ_S


# --- Retry-After -----------------------------------------------------------------------------


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP-date."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


def retry_after_from(headers: Mapping[str, str]) -> float | None:
    # OpenAI also sends `retry-after-ms`, which is more precise when present.
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    return parse_retry_after(headers.get("retry-after"))


# --- Error mapping ---------------------------------------------------------------------------


def error_details(body: object) -> tuple[str, str, str]:
    """(type, code, message) from an OpenAI- or Anthropic-shaped error body; empty if absent."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, str):  # some compatible servers (e.g. Ollama) send {"error": "text"}
        return "", "", err
    if not isinstance(err, dict):
        if isinstance(body, dict) and isinstance(body.get("message"), str):
            err = body
        else:
            return "", "", ""
    kind = err.get("type")
    code = err.get("code")
    message = err.get("message")
    return (
        kind if isinstance(kind, str) else "",
        str(code) if isinstance(code, str | int) else "",
        message if isinstance(message, str) else "",
    )


def is_overflow(code: str, message: str) -> bool:
    if code == "context_length_exceeded":
        return True
    lowered = message.lower()
    return any(phrase in lowered for phrase in _OVERFLOW_PHRASES)


def error_for_status(
    endpoint: Endpoint, status: int, headers: Mapping[str, str], body_text: str
) -> ModelError:
    try:
        body: object = codec.parse_text(body_text) if body_text else None
    except ValueError:
        body = None
    err_type, code, detail = error_details(body)
    if not detail and body is None:
        detail = body_text.strip()[:300]
    detail = endpoint.redact(detail)
    import httpx  # loaded: a response arrived

    reason = httpx.codes.get_reason_phrase(status)
    said = f"{endpoint.label} said {status} {reason}".rstrip()
    suffix = f": {detail}" if detail else ""
    config = endpoint.config

    table = table_of(config)
    if status in (401, 403):
        if config.api_key_file:
            where = f"the key in {config.api_key_file} (api_key_file in {table})"
        elif config.api_key_env:
            where = f"the key in {config.api_key_env} (api_key_env in {table})"
        else:
            where = f"api_key_env in {table}: the server wants a key"
        return ModelError(AUTH_FAILED, f"{said}: check {where}{suffix}")
    if status == 404:
        return ModelError(
            MODEL_NOT_FOUND,
            f"{said}: check model = {config.model!r} and base_url in {table}{suffix}",
        )
    if status == 413 or (status == 400 and is_overflow(code, detail)):
        return ModelError(CONTEXT_OVERFLOW, f"{said}: the conversation is too long{suffix}")
    if status == 429 or status >= 500 or err_type == "overloaded_error":
        return ModelError(
            PROVIDER_UNAVAILABLE,
            f"{said}{suffix}",
            retryable=True,
            retry_after=retry_after_from(headers),
        )
    return ModelError(BAD_REQUEST, f"{said}{suffix}")


def stream_error(endpoint: Endpoint, err_type: str, code: str, message: str) -> ModelError:
    """An error reported inside a 200 stream (Anthropic `error`, Responses `response.failed`)."""
    detail = endpoint.redact(message) or err_type or code or "unknown error"
    said = f"{endpoint.label} reported an error mid-stream: {detail}"
    if is_overflow(code, message):
        return ModelError(CONTEXT_OVERFLOW, said)
    transient = {
        "overloaded_error",
        "api_error",
        "server_error",
        "rate_limit_error",
        "rate_limit_exceeded",
        "server_is_overloaded",
        "slow_down",
        "internal_error",
    }
    if err_type in transient or code in transient:
        return ModelError(PROVIDER_UNAVAILABLE, said, retryable=True)
    if err_type in ("authentication_error", "permission_error"):
        return ModelError(AUTH_FAILED, said)
    if err_type == "not_found_error" or code == "model_not_found":
        return ModelError(MODEL_NOT_FOUND, said)
    if err_type == "invalid_request_error" or code == "invalid_request_error":
        return ModelError(BAD_REQUEST, said)
    # An unclassified failure after the request was accepted is most likely on the provider's
    # side; retrying is cheaper than failing the turn.
    return ModelError(PROVIDER_UNAVAILABLE, said, retryable=True)


def truncated(endpoint: Endpoint, missing: str) -> ModelError:
    return ModelError(
        PROVIDER_UNAVAILABLE,
        f"{endpoint.label} ended the response stream early (no {missing})",
        retryable=True,
    )


def table_of(config: ModelConfig) -> str:
    """How a message names the model's table: `[models.local]`."""
    return f"[models.{config.name}]"


def transport_error(endpoint: Endpoint, exc: httpx.TransportError) -> ModelError:
    import httpx  # loaded: it raised `exc`

    where = host_label(endpoint.config.base_url or "") or endpoint.label
    if isinstance(exc, httpx.ConnectError) and (mistake := connect_mistake(exc)) is not None:
        # A configuration mistake, not a passing failure: retrying cannot help, so the call
        # fails at once, saying what to fix (docs/configuration.md, "Fail fast").
        return ModelError(
            PROVIDER_UNAVAILABLE,
            f"cannot connect to {endpoint.label} ({where}): {mistake}: check base_url in "
            f"{table_of(endpoint.config)}",
        )
    if isinstance(exc, httpx.ConnectTimeout):
        text = f"timed out connecting to {endpoint.label} ({where})"
    elif isinstance(exc, httpx.ReadTimeout):
        # Headers, first byte or next chunk: the deadline is the longest silence allowed.
        silence = read_timeout_s(endpoint.config)
        text = (
            f"{endpoint.label} stopped responding: nothing for {silence:g} s "
            "(the model's read_timeout_s)"
        )
    elif isinstance(exc, httpx.TimeoutException):
        text = f"{endpoint.label} stopped responding (timed out)"
    elif isinstance(exc, httpx.ConnectError):
        text = f"cannot connect to {endpoint.label} ({where}): {type(exc).__name__}"
    elif isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        text = f"the connection to {endpoint.label} was lost mid-response"
    else:
        text = f"network error talking to {endpoint.label}: {type(exc).__name__}"
    # `str(exc)` is left out on purpose: it can carry URLs or proxy credentials.
    return ModelError(PROVIDER_UNAVAILABLE, text, retryable=True)


# --- Streaming -------------------------------------------------------------------------------


async def sse_events(
    endpoint: Endpoint,
    client: KeptClient,
    url: str,
    headers: dict[str, str],
    body: JsonMapping,
) -> AsyncGenerator[ServerSentEvent, None]:
    """POST `body` and yield the response's SSE events; every failure is a `ModelError`.

    Cancelling the consumer (or closing this generator) leaves the `async with` blocks, which
    closes the response and with it the connection, so the provider stops generating at once.
    """
    async with AsyncExitStack() as stack:
        # The provider's kept client (see http_client.py): one pool of connections reused from
        # call to call, never built on the event loop — nor httpx imported there: the first
        # build imports it in its worker thread (docs/design.md, "Start-up imports").
        http_client = await stack.enter_async_context(client.use())
        import httpx
        from httpx_sse import aconnect_sse

        try:
            source: EventSource = await stack.enter_async_context(
                # Encoded by the codec (orjson): httpx's `json=` is the standard library's encoder,
                # several times slower on a long history's megabytes, on the event loop.
                aconnect_sse(
                    http_client,
                    "POST",
                    url,
                    headers={"Content-Type": "application/json", **headers},
                    content=codec.dumps(body),
                )
            )
            response = source.response
            if response.status_code >= 400:
                text = (await response.aread()).decode("utf-8", "replace")
                raise error_for_status(endpoint, response.status_code, response.headers, text)
            content_type = response.headers.get("content-type", "")
            if "text/event-stream" not in content_type:
                text = (await response.aread()).decode("utf-8", "replace")
                raise _not_a_stream(endpoint, content_type, text)
            events = source.aiter_sse()
            try:
                async for event in events:
                    yield event
            except GeneratorExit:
                await _drain(events)
                raise
        except httpx.TransportError as exc:
            raise transport_error(endpoint, exc) from None


async def stream_model_events(
    endpoint: Endpoint,
    client: KeptClient,
    url: str,
    headers: dict[str, str],
    body: JsonMapping,
    parser: StreamParser,
) -> AsyncGenerator[ModelEvent, None]:
    """POST `body` and yield the model events `parser` makes of the response (models/stream.py).

    aclosing: leaving at the final event (or on an error) closes the response right away."""
    async with aclosing(sse_events(endpoint, client, url, headers, body)) as events:
        async for event in events:
            for out in parser.feed(event):
                yield out
            if parser.done:
                break
    for out in parser.finish():
        yield out


async def _drain(events: AsyncIterator[ServerSentEvent]) -> None:
    """Read to the end of a stream whose consumer stopped at its final event, briefly.

    Providers stop reading at their final event (`[DONE]`, `message_stop`, ...), a moment before
    the response body ends; a response closed before its end takes its connection with it, so
    the next call would connect (and handshake) again. Reading the last bytes lets the kept
    client reuse the connection. Not when the call is being cancelled: an interrupt must close
    the connection at once, so that the provider stops generating.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        return
    import httpx  # loaded: a response is being read

    try:
        async with asyncio.timeout(DRAIN_S):
            async for _ in events:
                pass
    except (TimeoutError, httpx.HTTPError):
        pass  # the connection is then closed instead of reused: nothing lost


def _not_a_stream(endpoint: Endpoint, content_type: str, text: str) -> ModelError:
    # A 200 with a JSON error body is how some compatible servers fail; classify it as such.
    try:
        body: object = codec.parse_text(text)
    except ValueError:
        body = None
    err_type, code, message = error_details(body)
    if message:
        return stream_error(endpoint, err_type, code, message)
    return ModelError(
        PROVIDER_UNAVAILABLE,
        f"{endpoint.label} answered with {content_type or 'no content type'} instead of an "
        "event stream",
        retryable=True,
    )


def parse_data(endpoint: Endpoint, event: ServerSentEvent) -> dict[str, object]:
    try:
        data = codec.parse_text(event.data)
    except ValueError:
        raise ModelError(
            PROVIDER_UNAVAILABLE,
            f"{endpoint.label} sent a malformed stream event",
            retryable=True,
        ) from None
    if not isinstance(data, dict):
        raise ModelError(
            PROVIDER_UNAVAILABLE,
            f"{endpoint.label} sent an unexpected stream event",
            retryable=True,
        )
    return data


def parse_arguments(text: str) -> JsonObject | None:
    """Tool-call arguments as an object, or `None` when the model produced something else."""
    if not text.strip():
        return {}
    try:
        value = codec.parse_text(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# --- Provider-neutral history preparation -----------------------------------------------------

INTERRUPTED_RESULT = (
    "This tool call did not run to completion: it was interrupted (for example by the user) "
    "before it produced a result."
)
SUMMARY_PREFIX = "Summary of the earlier conversation (it replaces the messages it summarizes):\n\n"
NOTICE_PREFIX = "[Note from OpenVaala, not written by the user] "
# Appended to an agent message or tool output that a turn's end cut short (`marked`).
INTERRUPTED_MARK = "[interrupted before it finished]"
FAILED_MARK = "[stopped by an error before it finished]"


def summary_text(item: Item) -> str:
    return SUMMARY_PREFIX + str(item.get("text", ""))


def notice_text(item: Item) -> str:
    return NOTICE_PREFIX + str(item.get("text", ""))


def tool_output_text(item: Item) -> str:
    output = item.get("output", "")
    return output if isinstance(output, str) else codec.text(output)


def cut_short_mark(item: Item) -> str | None:
    """The mark of an item the turn's end cut short, or `None` for a finished one.

    An interrupted (or failed) turn keeps what it produced: partial text, partial tool output.
    Sent as is, the model cannot tell a cut-off answer or an empty tool message from a finished
    one, so the text it is sent says so.
    """
    status = item.get("status")
    if status == INTERRUPTED:
        return INTERRUPTED_MARK
    if status == FAILED:
        return FAILED_MARK
    return None


def tool_result_text(item: Item) -> str:
    """What a tool result says to the model: its output, marked if it was cut short (an empty
    output is then the mark alone)."""
    output = tool_output_text(item)
    mark = cut_short_mark(item)
    if mark is None:
        return output
    return f"{output.rstrip()}\n{mark}" if output.strip() else mark


def agent_text(item: Item) -> str:
    """What an agent message says to the model: its text, marked if it was cut short. A message
    without text stays without (providers send nothing for it)."""
    text = str(item.get("text", ""))
    mark = cut_short_mark(item)
    if mark is None or not text.strip():
        return text
    return f"{text.rstrip()}\n{mark}"


def pair_tool_calls(items: list[Item]) -> list[Item]:
    """The history with every tool call answered right after its group of calls.

    Every wire format rejects a call without a result (and a result without its call). An
    interrupted call gets a synthetic error result; a result whose call is no longer in context
    (cut by compaction) becomes a note instead. Results are moved to follow their group of
    consecutive calls, which is where all three APIs require them.

    Items pass through as the same objects (the providers' `WireCache` relies on it); only the
    synthetic results and the notes are new. A user message closes every open group, so the
    parts of a history on either side of one are paired alone (models/assembly.py relies on it).
    This runs on every model call (on what changed since the last one, and on whole histories
    after a compaction), so it is written for speed: one pass, set lookups, no closures.
    """
    out: list[Item] = []
    append = out.append
    calls: list[Item] = []  # the open group of consecutive calls
    call_ids: set[object] = set()  # their (hashable) callIds
    results: dict[str, Item] = {}
    notes: list[Item] = []

    for item in items:
        kind = item.get("type")
        if kind == TOOL_CALL:
            if results:  # a new round of calls after results: the previous group is complete
                _flush(out, calls, results, notes)
                call_ids.clear()
            raw = item.get("callId")
            try:
                seen = raw in call_ids
            except TypeError:  # an unhashable callId: compare the slow way
                seen = any(c.get("callId") == raw for c in calls)
            else:
                call_ids.add(raw)
            if not seen:
                calls.append(item)
                append(item)
        elif kind == TOOL_RESULT:
            call_id = str(item.get("callId", ""))
            if call_id in call_ids and call_id not in results:
                results[call_id] = item
            else:
                note: Item = {
                    "type": NOTICE,
                    "text": f"Result of an earlier {item.get('name', 'tool')} call: "
                    + tool_result_text(item),
                }
                # Inside an open group the note waits until the group's results are out.
                (notes if calls else out).append(note)
        elif not calls:
            append(item)
        elif kind in (AGENT_MESSAGE, REASONING) and not results:
            # Text or reasoning between calls of one assistant step (Anthropic can interleave
            # them) belongs to that step: keep it in place, the results still follow.
            append(item)
        else:
            _flush(out, calls, results, notes)
            call_ids.clear()
            append(item)
    if calls:
        _flush(out, calls, results, notes)
    return out


def _flush(out: list[Item], calls: list[Item], results: dict[str, Item], notes: list[Item]) -> None:
    """Close a group of calls: each call's result (or a synthetic one), then the waiting notes."""
    for call in calls:
        call_id = str(call.get("callId", ""))
        out.append(
            results.get(call_id)
            or {
                "type": TOOL_RESULT,
                "callId": call_id,
                "name": call.get("name", ""),
                "output": INTERRUPTED_RESULT,
                "isError": True,
                "status": "completed",
            }
        )
    if notes:
        out.extend(notes)
        notes.clear()
    calls.clear()
    results.clear()


def last_user_index(items: list[Item]) -> int:
    """Index of the last user message (the start of the current turn), or -1."""
    for index in range(len(items) - 1, -1, -1):
        if items[index].get("type") == USER_MESSAGE:
            return index
    return -1


# --- Reusing the wire form of finished items --------------------------------------------------

W = TypeVar("W")

# Statuses after which an item never changes (records are never rewritten; see records.py).
FINAL_STATUSES = frozenset({COMPLETED, INTERRUPTED, FAILED})


class WireCache(Generic[W]):
    """The per-item wire form of finished items, computed once per provider and reused.

    Every model call sends the whole context again, and all of it but the newest items was sent
    before, unchanged: a finished item (status completed, interrupted or failed) never changes.
    So a provider converts each item once with its pure per-item function `convert` and looks the
    result up on later calls. Only that per-item part is cached; what depends on other items —
    pairing calls with results (synthetic results for interrupted calls), merging messages,
    choosing which reasoning to send back — is decided afresh on every call, from the cached parts.

    Entries are keyed by the item object itself (its ``id()``; the entry holds the item, so that
    id cannot be reused while the entry lives): an item read again from disk, or a copy, is
    converted again. An item without an ``itemId`` (the synthetic results and notes of
    `pair_tool_calls`, new on every call) or not yet finished (still streaming) is never cached.
    This relies on the runtime's rule that a finished item's dict is never modified. The cached
    wire objects are shared between requests: assembly must never mutate them (it copies one
    before adding to it).

    Bounded: two generations of at most `generation` entries each. New entries go into the young
    one; when it is full it becomes the old one (the previous old one is dropped), and an entry
    found in the old generation moves back to the young one. So a session that keeps calling the
    model keeps its entries, and the items of sessions no longer in use are let go after at most
    two rotations (until then the cache keeps them in memory). The generation is sized by what
    is live (`fit`: the contexts the provider's sessions hold, models/assembly.py), never below
    `minimum`: a fixed size smaller than one long context dropped that context's entries at
    every call, so it was converted again at every call. A history let go of memory takes its
    entries with it (`forget`).
    """

    def __init__(self, convert: Callable[[Item], W], minimum: int = 16_384) -> None:
        self.convert = convert
        self.minimum = minimum
        self.generation = minimum
        # id(item) -> wire form; the items themselves are held by the lists beside, which is
        # what keeps those ids from being reused while their entries live.
        self._young: dict[int, W] = {}
        self._young_items: list[Item] = []
        self._old: dict[int, W] = {}
        self._old_items: list[Item] = []
        self.conversions = 0  # how many times `convert` ran (for tests and benchmarks)

    def __len__(self) -> int:
        return len(self._young) + len(self._old)

    def clear(self) -> None:
        self._young, self._young_items, self._old, self._old_items = {}, [], {}, []

    def fit(self, live: int) -> None:
        """Size each generation for `live` items in use (at least `minimum`)."""
        self.generation = max(self.minimum, live)

    def forget(self, items: list[Item]) -> None:
        """Drop the entries of `items`: a history let go of memory (runtime/residency.py) must
        not stay alive here, held by its entries."""
        gone = set(map(id, items))
        if gone.isdisjoint(self._young) and gone.isdisjoint(self._old):
            return
        self._young = {k: v for k, v in self._young.items() if k not in gone}
        self._old = {k: v for k, v in self._old.items() if k not in gone}
        self._young_items = [i for i in self._young_items if id(i) not in gone]
        self._old_items = [i for i in self._old_items if id(i) not in gone]

    def wire(self, items: list[Item]) -> list[W]:
        """`[convert(item) for item in items]`, reusing earlier conversions of finished items."""
        # The lookups run at C speed; only the misses (new or unfinished items, synthetic
        # results) go through Python. A cached `None` (an item that sends nothing) is a hit.
        out: list[W | _Miss] = list(map(self._young.get, map(id, items), repeat(_MISS)))
        index = -1
        try:
            while True:
                index = out.index(_MISS, index + 1)
                out[index] = self._miss(items[index])
        except ValueError:
            pass
        return cast("list[W]", out)  # every miss was filled in

    def _miss(self, item: Item) -> W:
        self.conversions += 1
        if "itemId" not in item or item.get("status") not in FINAL_STATUSES:
            return self.convert(item)  # not finished (or synthetic): not cached
        key = id(item)
        if key in self._old:  # used again: back to the young generation
            wire = self._old.pop(key)
            self.conversions -= 1
        else:
            wire = self.convert(item)
        if len(self._young) >= self.generation:
            self._old, self._old_items = self._young, self._young_items
            self._young, self._young_items = {}, []
        self._young[key] = wire
        self._young_items.append(item)
        return wire


class _Miss:
    """The marker of a lookup that found nothing (`None` is a valid cached wire form)."""

    def __repr__(self) -> str:
        return "<miss>"


_MISS: Final = _Miss()
