"""The Chat Completions stream as model events (a pure parser; see models/stream.py).

- Text arrives as `choices[].delta.content`; reasoning, from servers that stream it, as
  `delta.reasoning_content` (DeepSeek, vLLM) or `delta.reasoning` (Ollama, OpenRouter). It is
  reported as `ReasoningDelta`s and one `ReasoningDone` once the answer (text or a tool call)
  begins, or at the end.
- Parallel tool calls arrive as fragments naming their call by `index`; they are assembled and
  reported when the stream ends (some compatible servers omit ids: one is made up, since the loop
  needs one to pair the result).
- Usage comes in a last chunk with empty `choices` (requested by `stream_options.include_usage`).
- The stream is complete only with `data: [DONE]`; a chunk with an `error` object (how several
  compatible servers fail mid-stream) becomes its `ModelError`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
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

if TYPE_CHECKING:
    from httpx_sse import ServerSentEvent

_STOP_REASONS = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


@dataclass
class _PartialCall:
    call_id: str = ""
    name: str = ""
    arguments: str = ""
    announced: bool = False  # its `ToolCallStarted` was sent: its id no longer changes


class OpenAIChatStream:
    """Feed it the SSE events of one `POST /chat/completions` with `stream: true`."""

    def __init__(self, endpoint: http.Endpoint) -> None:
        self.endpoint = endpoint
        self.calls: dict[int, _PartialCall] = {}
        self.reasoning: list[str] = []
        self.reasoning_done = False
        self.usage: dict[str, object] | None = None
        self.finish_reason: str | None = None
        self.done = False

    def feed(self, event: ServerSentEvent) -> list[ModelEvent]:
        if event.data.strip() == "[DONE]":
            self.done = True
            return []
        data = http.parse_data(self.endpoint, event)
        if "error" in data:
            err_type, code, message = http.error_details(data)
            raise http.stream_error(self.endpoint, err_type, code, message)
        usage = data.get("usage")
        if isinstance(usage, dict):
            self.usage = usage
        out: list[ModelEvent] = []
        choices = data.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, dict):
                self._choice(choice, out)
        return out

    def _choice(self, choice: dict[str, object], out: list[ModelEvent]) -> None:
        delta = obj(choice.get("delta"))
        thought = string(delta.get("reasoning_content")) or string(delta.get("reasoning"))
        if thought:
            self.reasoning.append(thought)
            out.append(ReasoningDelta(thought))
        content = string(delta.get("content"))
        fragments = delta.get("tool_calls")
        if self.reasoning and not self.reasoning_done and (content or fragments):
            # The answer has begun, so the reasoning block is finished.
            self.reasoning_done = True
            out.append(ReasoningDone("".join(self.reasoning)))
        if content:
            out.append(TextDelta(content))
        if isinstance(fragments, list):
            self._add_fragments(fragments, out)
        reason = string(choice.get("finish_reason"))
        if reason is not None:
            self.finish_reason = reason

    def _add_fragments(self, fragments: list[object], out: list[ModelEvent]) -> None:
        """Assemble parallel calls: each fragment names its call by `index`. A call is
        announced (`ToolCallStarted`) once its name is known."""
        for position, fragment in enumerate(fragments):
            if not isinstance(fragment, dict):
                continue
            index = fragment.get("index")
            key = index if isinstance(index, int) else position
            slot = self.calls.setdefault(key, _PartialCall())
            call_id = string(fragment.get("id"))
            if call_id and not slot.announced:
                slot.call_id = call_id
            function = obj(fragment.get("function"))
            name = string(function.get("name"))
            if name and not slot.name:
                slot.name = name
            arguments = string(function.get("arguments"))
            if arguments is not None:
                slot.arguments += arguments
            if slot.name and not slot.announced:
                slot.announced = True
                slot.call_id = slot.call_id or _new_call_id(key)
                out.append(ToolCallStarted(slot.call_id, slot.name))

    def finish(self) -> list[ModelEvent]:
        if not self.done:
            raise http.truncated(self.endpoint, "data: [DONE]")
        out: list[ModelEvent] = []
        if self.reasoning and not self.reasoning_done:
            out.append(ReasoningDone("".join(self.reasoning)))
        out += [_finished_call(self.calls[index], index) for index in sorted(self.calls)]
        if self.usage is not None:
            cached = obj(self.usage.get("prompt_tokens_details")).get("cached_tokens")
            out.append(
                UsageReported(
                    input_tokens=integer(self.usage.get("prompt_tokens")),
                    output_tokens=integer(self.usage.get("completion_tokens")),
                    cached_input_tokens=integer(cached),
                )
            )
        finish = self.finish_reason or "stop"
        stop = _STOP_REASONS.get(finish, finish)
        if self.calls and stop == "stop":
            stop = "tool_calls"  # some servers say "stop" even when they called tools
        out.append(StreamEnded(stop_reason=stop))
        return out


def _new_call_id(index: int) -> str:
    return f"call_{index}_{secrets.token_hex(6)}"


def _finished_call(call: _PartialCall, index: int) -> ToolCallRequested:
    arguments = http.parse_arguments(call.arguments)
    return ToolCallRequested(
        # Some compatible servers omit ids; the loop needs one to pair the result.
        call_id=call.call_id or _new_call_id(index),
        name=call.name,
        arguments=arguments if arguments is not None else {},
        arguments_text=call.arguments,
    )
