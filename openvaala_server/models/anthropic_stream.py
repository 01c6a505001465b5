"""The Anthropic Messages stream as model events (a pure parser; see models/stream.py).

- Content blocks are indexed: text and thinking stream as deltas; a thinking block's signature
  (`signature_delta`) and a `redacted_thinking` block's data are kept in `provider_data` so the
  block can be sent back; a `tool_use` block's input streams as JSON fragments and becomes one
  `ToolCallRequested` when the block stops.
- Usage: `message_start` carries the input counts, `message_delta` the cumulative ones (later
  values replace earlier ones); input is `input_tokens` plus both cache counters.
- The stream is complete only with `message_stop`; an `error` event becomes the `ModelError` of
  its type (`overloaded_error` is a retryable `provider_unavailable`). `ping` and unknown events
  are ignored: new event types must not break us.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openvaala_server.models import http
from openvaala_server.models.base import (
    ModelEvent,
    ReasoningDelta,
    ReasoningDone,
    StreamEnded,
    TextDelta,
    ToolCallRequested,
    ToolCallStarted,
    UsageReported,
)
from openvaala_server.models.stream import integer, obj, string
from openvaala_server.protocol import codec
from openvaala_server.protocol.json_types import JsonObject

if TYPE_CHECKING:
    from httpx_sse import ServerSentEvent

PROVIDER_TAG = "anthropic"  # marks reasoning provider_data this provider can send back

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "max_tokens",
    "refusal": "content_filter",
}


@dataclass
class _Block:
    type: str
    text: list[str] = field(default_factory=list)
    signature: str = ""
    call_id: str = ""
    name: str = ""
    data: str = ""  # redacted_thinking payload


class AnthropicStream:
    """Feed it the SSE events of one `POST /v1/messages` with `stream: true`."""

    def __init__(self, endpoint: http.Endpoint) -> None:
        self.endpoint = endpoint
        self.blocks: dict[int, _Block] = {}
        self.usage: dict[str, int] = {}
        self.stop = "stop"
        self.done = False

    def feed(self, event: ServerSentEvent) -> list[ModelEvent]:
        data = http.parse_data(self.endpoint, event)
        kind = string(data.get("type")) or event.event
        if kind == "content_block_delta":
            block = self.blocks.get(integer(data.get("index")))
            delta = data.get("delta")
            if block is not None and isinstance(delta, dict):
                out = _apply_delta(block, delta)
                return [out] if out is not None else []
        elif kind == "content_block_start":
            start = data.get("content_block")
            if isinstance(start, dict):
                block = _start_block(start)
                self.blocks[integer(data.get("index"))] = block
                if block.type == "tool_use" and block.call_id:
                    return [ToolCallStarted(block.call_id, block.name)]
        elif kind == "content_block_stop":
            block = self.blocks.pop(integer(data.get("index")), None)
            finished = _finish_block(block) if block is not None else None
            return [finished] if finished is not None else []
        elif kind == "message_start":
            self._add_usage(obj(data.get("message")).get("usage"))
        elif kind == "message_delta":
            self._add_usage(data.get("usage"))
            reason = string(obj(data.get("delta")).get("stop_reason"))
            if reason is not None:
                self.stop = _STOP_REASONS.get(reason, reason)
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            error = obj(data.get("error"))
            raise http.stream_error(
                self.endpoint,
                string(error.get("type")) or "",
                "",
                string(error.get("message")) or "",
            )
        return []

    def finish(self) -> list[ModelEvent]:
        if not self.done:
            raise http.truncated(self.endpoint, "message_stop event")
        usage = self.usage
        cached = usage.get("cache_read_input_tokens", 0)
        return [
            UsageReported(
                input_tokens=usage.get("input_tokens", 0)
                + cached
                + usage.get("cache_creation_input_tokens", 0),
                output_tokens=usage.get("output_tokens", 0),
                cached_input_tokens=cached,
            ),
            StreamEnded(stop_reason=self.stop),
        ]

    def _add_usage(self, raw: object) -> None:
        # message_delta carries cumulative counts, so later values replace earlier ones.
        for key, value in obj(raw).items():
            if isinstance(value, int) and not isinstance(value, bool):
                self.usage[key] = value


def _start_block(start: dict[str, object]) -> _Block:
    kind = string(start.get("type")) or ""
    block = _Block(type=kind)
    if kind == "tool_use":
        block.call_id = string(start.get("id")) or ""
        block.name = string(start.get("name")) or ""
        # Normally `{}` with the input streamed as JSON fragments; keep any non-empty input.
        initial = start.get("input")
        if isinstance(initial, dict) and initial:
            block.text.append(codec.text(initial, ascii=True))
    elif kind == "redacted_thinking":
        block.data = string(start.get("data")) or ""
    elif kind in ("text", "thinking"):
        initial_text = string(start.get(kind))
        if initial_text is not None:
            block.text.append(initial_text)
    return block


def _apply_delta(block: _Block, delta: dict[str, object]) -> ModelEvent | None:
    kind = delta.get("type")
    if kind == "text_delta" and (text := string(delta.get("text"))) is not None:
        block.text.append(text)
        return TextDelta(text) if text else None
    if kind == "thinking_delta" and (thought := string(delta.get("thinking"))) is not None:
        block.text.append(thought)
        return ReasoningDelta(thought) if thought else None
    if kind == "signature_delta" and (signature := string(delta.get("signature"))) is not None:
        block.signature += signature
    elif kind == "input_json_delta" and (part := string(delta.get("partial_json"))) is not None:
        block.text.append(part)
    return None


def _finish_block(block: _Block) -> ModelEvent | None:
    if block.type == "thinking":
        data: JsonObject | None = (
            {"provider": PROVIDER_TAG, "signature": block.signature} if block.signature else None
        )
        return ReasoningDone(text="".join(block.text), provider_data=data)
    if block.type == "redacted_thinking":
        return ReasoningDone(
            text="", provider_data={"provider": PROVIDER_TAG, "redacted": block.data}
        )
    if block.type == "tool_use":
        text = "".join(block.text)
        arguments = http.parse_arguments(text)
        return ToolCallRequested(
            call_id=block.call_id,
            name=block.name,
            arguments=arguments if arguments is not None else {},
            arguments_text=text,
        )
    return None  # text was streamed as deltas already
