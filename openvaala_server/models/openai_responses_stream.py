"""The Responses API stream as model events (a pure parser; see models/stream.py).

- Text streams as `response.output_text.delta`; reasoning as
  `response.reasoning_summary_text.delta` (summaries, which are separate paragraphs: a new part
  starts with a blank line) or `response.reasoning_text.delta` (servers that expose raw
  reasoning, such as gpt-oss).
- A finished `function_call` or `reasoning` output item (`response.output_item.done`) becomes a
  `ToolCallRequested` or a `ReasoningDone`; the reasoning keeps its id, summary and
  `encrypted_content` in `provider_data` so it can be sent back, stamped with the reasoning
  context in effect (the `response.created` echo, else the requested mode).
- The stream ends with `response.completed` or `response.incomplete` (whose reason becomes the
  stop reason), carrying the usage; `response.failed` and `error` become their `ModelError`.
"""

from __future__ import annotations

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
from openvaala_server.protocol.json_types import JsonObject, JsonValue

if TYPE_CHECKING:
    from httpx_sse import ServerSentEvent

PROVIDER_TAG = "openai_responses"  # marks reasoning provider_data this provider can send back

_INCOMPLETE_REASONS = {"max_output_tokens": "max_tokens", "content_filter": "content_filter"}
_REASONING_DELTAS = ("response.reasoning_summary_text.delta", "response.reasoning_text.delta")


class OpenAIResponsesStream:
    """Feed it the SSE events of one `POST /responses` with `stream: true`; `requested` is the
    reasoning context the request applied (see openai_responses.py)."""

    def __init__(self, endpoint: http.Endpoint, requested: str) -> None:
        self.endpoint = endpoint
        self.applied = requested
        self.called_tools = False
        self.final: dict[str, object] | None = None
        self.stop = "stop"

    @property
    def done(self) -> bool:
        return self.final is not None

    def feed(self, event: ServerSentEvent) -> list[ModelEvent]:
        data = http.parse_data(self.endpoint, event)
        kind = string(data.get("type")) or event.event
        if kind == "response.output_text.delta":
            text = string(data.get("delta"))
            return [TextDelta(text)] if text else []
        if kind in _REASONING_DELTAS:
            thought = string(data.get("delta"))
            return [ReasoningDelta(thought)] if thought else []
        if kind == "response.reasoning_summary_part.added":
            # Summary parts are separate paragraphs; keep them apart in the live text.
            return [ReasoningDelta("\n\n")] if integer(data.get("summary_index")) > 0 else []
        if kind == "response.output_item.added":
            item = obj(data.get("item"))
            call_id = string(item.get("call_id")) or string(item.get("id"))
            if item.get("type") == "function_call" and call_id:
                return [ToolCallStarted(call_id, str(item.get("name", "")))]
        if kind == "response.output_item.done":
            item = obj(data.get("item"))
            if item.get("type") == "function_call":
                self.called_tools = True
                return [_tool_call(item)]
            if item.get("type") == "reasoning":
                return [_reasoning_done(item, self.applied)]
        elif kind == "response.created":
            self.applied = _echoed_context(data) or self.applied
        elif kind in ("response.completed", "response.incomplete"):
            final = obj(data.get("response"))
            self.applied = _echoed_context(data) or self.applied
            if kind == "response.incomplete":
                reason = obj(final.get("incomplete_details")).get("reason")
                self.stop = _INCOMPLETE_REASONS.get(str(reason), str(reason or "incomplete"))
            self.final = final
        elif kind == "response.failed":
            raise self._error(obj(obj(data.get("response")).get("error")))
        elif kind == "error":
            nested = data.get("error")
            raise self._error(nested if isinstance(nested, dict) else data)
        return []

    def finish(self) -> list[ModelEvent]:
        if self.final is None:
            raise http.truncated(self.endpoint, "response.completed event")
        out: list[ModelEvent] = []
        usage = self.final.get("usage")
        if isinstance(usage, dict):
            cached = obj(usage.get("input_tokens_details")).get("cached_tokens")
            out.append(
                UsageReported(
                    input_tokens=integer(usage.get("input_tokens")),
                    output_tokens=integer(usage.get("output_tokens")),
                    reasoning_context=self.applied,
                    cached_input_tokens=integer(cached),
                )
            )
        stop = "tool_calls" if self.called_tools and self.stop == "stop" else self.stop
        out.append(StreamEnded(stop_reason=stop))
        return out

    def _error(self, error: dict[str, object]) -> Exception:
        err_type, code, message = (str(error.get(key) or "") for key in ("type", "code", "message"))
        return http.stream_error(self.endpoint, err_type, code, message)


def _echoed_context(data: dict[str, object]) -> str | None:
    context = obj(obj(data.get("response")).get("reasoning")).get("context")
    return context if isinstance(context, str) and context else None


def _tool_call(item: dict[str, object]) -> ToolCallRequested:
    text = string(item.get("arguments")) or ""
    arguments = http.parse_arguments(text)
    call_id = str(item.get("call_id") or item.get("id") or "")
    return ToolCallRequested(
        call_id=call_id,
        name=str(item.get("name", "")),
        arguments=arguments if arguments is not None else {},
        arguments_text=text,
        provider_data={"id": string(item.get("id")), "call_id": call_id},
    )


def _text_parts(value: object) -> list[JsonValue]:
    parts = value if isinstance(value, list) else []
    return [part for part in parts if isinstance(part, dict) and "text" in part]


def _reasoning_done(item: dict[str, object], applied: str) -> ReasoningDone:
    summary = _text_parts(item.get("summary"))
    # Servers that expose raw reasoning (gpt-oss) put it in `content` instead of `summary`.
    content = _text_parts(item.get("content"))
    text = "\n\n".join(str(obj(part).get("text")) for part in summary or content)
    data: JsonObject = {
        "provider": PROVIDER_TAG,
        "id": string(item.get("id")),
        "summary": summary,
        # Kept with the item, so the usage estimate knows the mode after a restart too.
        "reasoningContext": applied,
    }
    encrypted = string(item.get("encrypted_content"))
    if encrypted is not None:
        data["encrypted_content"] = encrypted
    return ReasoningDone(text=text, provider_data=data)
