"""A provider's response stream as a pure fold: SSE events in, model events out.

Each HTTP provider has a parser (`anthropic_stream`, `openai_chat_stream`,
`openai_responses_stream`) that knows its wire format and nothing of HTTP: it is fed the parsed
SSE events one at a time, returns the `ModelEvent`s each one completes, says when it has seen
the final event, and at the end returns what only the whole stream tells (the finished tool
calls, the usage, the stop reason) — or raises the `ModelError` of a stream that was cut short
or reported an error. The HTTP code (`http.stream_model_events`) only moves bytes; tests feed
recorded streams to the parsers directly (tests/server/models/test_parsers_*.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from openvaala_server.models.base import ModelEvent

if TYPE_CHECKING:
    from httpx_sse import ServerSentEvent


class StreamParser(Protocol):
    @property
    def done(self) -> bool:
        """The final event was seen: read no further (the rest of the body is drained)."""
        ...

    def feed(self, event: ServerSentEvent) -> list[ModelEvent]:
        """The model events `event` completes; raises `ModelError` for an error event."""
        ...

    def finish(self) -> list[ModelEvent]:
        """The events of the whole stream (tool calls, usage, the end); raises `ModelError`
        when the stream ended before its final event."""
        ...


def parse(parser: StreamParser, events: Iterable[ServerSentEvent]) -> list[ModelEvent]:
    """Every model event of a whole recorded stream, as the HTTP code yields them one by one."""
    out: list[ModelEvent] = []
    for event in events:
        out += parser.feed(event)
        if parser.done:
            break
    out += parser.finish()
    return out


# --- narrowing free JSON (a provider may send anything; new fields must not break us) ---------


def obj(value: object) -> dict[str, object]:
    """`value` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def string(value: object) -> str | None:
    """`value` if it is a string, else `None`."""
    return value if isinstance(value, str) else None


def integer(value: object) -> int:
    """`value` if it is an integer (not a bool), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
