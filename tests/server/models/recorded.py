"""Recorded provider response streams (streams/*/*.sse) as the SSE events the parsers read."""

from __future__ import annotations

from pathlib import Path

import httpx
from httpx_sse import EventSource, ServerSentEvent

from openvaala_server.config import ModelConfig
from openvaala_server.models import http
from openvaala_server.models.base import ModelError, ModelEvent
from openvaala_server.models.stream import StreamParser, parse

STREAMS = Path(__file__).parent / "streams"


def events(provider: str, name: str) -> list[ServerSentEvent]:
    """The SSE events of a recorded body, decoded by httpx-sse as on the wire (no HTTP)."""
    body = (STREAMS / provider / f"{name}.sse").read_bytes()
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    return list(EventSource(response).iter_sse())


def endpoint(provider: str, label: str = "Provider", secret: str | None = None) -> http.Endpoint:
    config = ModelConfig(
        "m", provider, "some-model", context_window=200_000, max_output_tokens=4096
    )
    return http.Endpoint(label, config, secret)


def run(parser: StreamParser, provider: str, name: str) -> list[ModelEvent]:
    return parse(parser, events(provider, name))


def failure(parser: StreamParser, provider: str, name: str) -> tuple[ModelError, list[ModelEvent]]:
    """The error a recorded stream ends in, and the events reported before it."""
    seen: list[ModelEvent] = []
    try:
        for event in events(provider, name):
            seen += parser.feed(event)
            if parser.done:
                break
        seen += parser.finish()
    except ModelError as exc:
        return exc, seen
    raise AssertionError(f"{provider}/{name} parsed without an error: {seen}")
