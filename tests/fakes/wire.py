"""Rendering a scripted `Reply` as each provider's exact SSE wire format.

A renderer yields encoded SSE frames (`bytes`) and, in between, the control steps (`Wait`,
`Delay`, `Drop`, `EndStream`) that the server acts on. Each format keeps one open content block
(message item / content block) so consecutive text steps, even split by waits, stay one block.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from typing import Any

from tests.fakes.script import (
    CONTROL_STEPS,
    Delay,
    Drop,
    EndStream,
    HttpError,
    RawEvent,
    Reasoning,
    Reply,
    Step,
    StreamError,
    Text,
    ToolCall,
    Wait,
)

CHAT = "openai"
RESPONSES = "openai_responses"
ANTHROPIC = "anthropic"
WIRES = (CHAT, RESPONSES, ANTHROPIC)

Frame = bytes | Wait | Delay | Drop | EndStream


def sse(data: Any, event: str | None = None) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def split(text: str, parts: int) -> list[str]:
    """`text` in `parts` roughly equal fragments (at least one, empty text gives [""])."""
    if parts <= 1 or len(text) <= 1:
        return [text]
    size = -(-len(text) // parts)
    return [text[i : i + size] for i in range(0, len(text), size)]


class Ids:
    """Deterministic, per-server unique ids: call_1, call_2, ... across all replies."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def next(self) -> int:
        return next(self._counter)


def paused(call: ToolCall, fragment: int) -> Iterator[Frame]:
    """The call's pause, after its first arguments fragment (`ToolCall.pause`)."""
    if call.pause is not None and fragment == 0:
        yield Wait(call.pause)


def arguments_text(call: ToolCall) -> str:
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(call.arguments, separators=(",", ":"))


class Renderer:
    wire = ""

    def __init__(self, reply: Reply, request: Any, ids: Ids) -> None:
        self.reply = reply
        self.request = request if isinstance(request, dict) else {}
        self.ids = ids
        self.block: str | None = None  # kind of the open block: "text" | "reasoning" | "tool"
        self.output_chars = 0
        self.called_tools = False
        self.model = str(self.request.get("model", "fake-model"))

    # -- shared driver
    def frames(self) -> Iterator[Frame]:
        yield from self.start()
        for step in self.reply.steps:
            if isinstance(step, CONTROL_STEPS):
                yield step
            elif isinstance(step, Drop | EndStream):
                yield step
                return
            elif isinstance(step, StreamError):
                yield from self.error(step)
                return
            elif isinstance(step, RawEvent):
                yield sse(step.data, step.event)
            else:
                yield from self.content(step)
        yield from self.close_block()
        yield from self.finish()

    def content(self, step: Step) -> Iterator[Frame]:
        if isinstance(step, Text):
            if self.block != "text":
                yield from self.close_block()
                yield from self.open_text()
                self.block = "text"
            for chunk in step.chunks:
                self.output_chars += len(chunk)
                yield from self.text_delta(chunk)
        elif isinstance(step, Reasoning):
            yield from self.close_block()
            self.block = "reasoning"
            yield from self.reasoning(step)
        elif isinstance(step, ToolCall):
            yield from self.close_block()
            self.block = "tool"
            self.called_tools = True
            yield from self.tool_call(step)

    def usage(self) -> tuple[int, int, int]:
        if self.reply.usage_tokens is not None:
            return self.reply.usage_tokens
        prompt = len(json.dumps(self.request))
        return max(1, prompt // 4), max(1, self.output_chars // 4), 0

    def stop(self) -> str:
        if self.reply.stop:
            return self.reply.stop
        return "tool_calls" if self.called_tools else "stop"

    def overflow_message(self) -> str:
        return (
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 9000 tokens. Please reduce the length of the messages."
        )

    def error_body(self, error: HttpError) -> dict[str, Any]:
        message = error.message or "error"
        code = error.code
        if error.context_overflow:
            message, code = self.overflow_message(), "context_length_exceeded"
        return {
            "error": {
                "message": message,
                "type": error.error_type or _openai_type(error.status),
                "param": None,
                "code": code,
            }
        }

    # -- per-format hooks
    def start(self) -> Iterator[Frame]:
        return iter(())

    def open_text(self) -> Iterator[Frame]:
        return iter(())

    def text_delta(self, chunk: str) -> Iterator[Frame]:
        raise NotImplementedError

    def reasoning(self, step: Reasoning) -> Iterator[Frame]:
        raise NotImplementedError

    def tool_call(self, step: ToolCall) -> Iterator[Frame]:
        raise NotImplementedError

    def close_block(self) -> Iterator[Frame]:
        self.block = None
        return iter(())

    def finish(self) -> Iterator[Frame]:
        raise NotImplementedError

    def error(self, step: StreamError) -> Iterator[Frame]:
        raise NotImplementedError


def _openai_type(status: int) -> str:
    if status in (401, 403):
        return "invalid_request_error" if status == 401 else "permission_error"
    if status == 429:
        return "requests"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


class ChatRenderer(Renderer):
    """Chat Completions: `data: {chunk}` lines, usage chunk if asked, then `data: [DONE]`."""

    wire = CHAT

    def __init__(self, reply: Reply, request: Any, ids: Ids) -> None:
        super().__init__(reply, request, ids)
        self.id = f"chatcmpl-{ids.next()}"
        self.created = int(time.time())
        self.tool_index = 0

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse(
            {
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    def start(self) -> Iterator[Frame]:
        yield self.chunk({"role": "assistant", "content": ""})

    def text_delta(self, chunk: str) -> Iterator[Frame]:
        yield self.chunk({"content": chunk})

    def reasoning(self, step: Reasoning) -> Iterator[Frame]:
        for chunk in step.chunks:
            yield self.chunk({"reasoning_content": chunk})  # DeepSeek/vLLM style

    def tool_call(self, step: ToolCall) -> Iterator[Frame]:
        index, self.tool_index = self.tool_index, self.tool_index + 1
        call_id = step.call_id or f"call_{self.ids.next()}"
        fragments = split(arguments_text(step), step.chunks)
        head = {"index": index, "id": call_id, "type": "function"}
        yield self.chunk(
            {"tool_calls": [{**head, "function": {"name": step.name, "arguments": ""}}]}
        )
        for position, fragment in enumerate(fragments):
            yield self.chunk(
                {"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}
            )
            yield from paused(step, position)

    def finish(self) -> Iterator[Frame]:
        stop = {"max_tokens": "length"}.get(self.stop(), self.stop())
        yield self.chunk({}, finish=stop)
        options = self.request.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage") and self.reply.reports_usage:
            prompt, completion, cached = self.usage()
            yield sse(
                {
                    "id": self.id,
                    "object": "chat.completion.chunk",
                    "created": self.created,
                    "model": self.model,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": completion,
                        "total_tokens": prompt + completion,
                        "prompt_tokens_details": {"cached_tokens": cached},
                    },
                }
            )
        yield sse("[DONE]")

    def error(self, step: StreamError) -> Iterator[Frame]:
        code = {"context_overflow": "context_length_exceeded"}.get(step.kind, step.kind)
        message = step.message or (
            self.overflow_message() if step.kind == "context_overflow" else "The server is busy"
        )
        yield sse({"error": {"message": message, "type": "server_error", "code": code}})


class ResponsesRenderer(Renderer):
    """Responses API: named events (`event: response.output_text.delta`), `sequence_number`s."""

    wire = RESPONSES

    def __init__(self, reply: Reply, request: Any, ids: Ids) -> None:
        super().__init__(reply, request, ids)
        self.id = f"resp_{ids.next()}"
        self.seq = 0
        self.output: list[dict[str, Any]] = []
        self.item: dict[str, Any] | None = None  # the open message item
        include = self.request.get("include")
        self.encrypted = isinstance(include, list) and "reasoning.encrypted_content" in include

    def event(self, kind: str, **fields: Any) -> bytes:
        self.seq += 1
        return sse({"type": kind, "sequence_number": self.seq, **fields}, event=kind)

    def response(self, status: str, **fields: Any) -> dict[str, Any]:
        reasoning = self.request.get("reasoning")
        reasoning = dict(reasoning) if isinstance(reasoning, dict) else {}
        if self.reply.applied_reasoning_context is not None:
            reasoning["context"] = self.reply.applied_reasoning_context
        return {
            "id": self.id,
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "model": self.model,
            "output": list(self.output),
            "reasoning": reasoning or None,
            "store": self.request.get("store", True),
            "usage": None,
            **fields,
        }

    def start(self) -> Iterator[Frame]:
        yield self.event("response.created", response=self.response("in_progress"))
        yield self.event("response.in_progress", response=self.response("in_progress"))

    def open_text(self) -> Iterator[Frame]:
        item = {
            "id": f"msg_{self.ids.next()}",
            "type": "message",
            "status": "in_progress",
            "role": "assistant",
            "content": [],
        }
        self.item = item
        yield self.event("response.output_item.added", output_index=len(self.output), item=item)
        yield self.event(
            "response.content_part.added",
            item_id=item["id"],
            output_index=len(self.output),
            content_index=0,
            part={"type": "output_text", "text": "", "annotations": []},
        )
        item["text"] = ""

    def text_delta(self, chunk: str) -> Iterator[Frame]:
        assert self.item is not None
        self.item["text"] += chunk
        yield self.event(
            "response.output_text.delta",
            item_id=self.item["id"],
            output_index=len(self.output),
            content_index=0,
            delta=chunk,
        )

    def close_block(self) -> Iterator[Frame]:
        if self.block == "text" and self.item is not None:
            item, index = self.item, len(self.output)
            text = item.pop("text")
            part = {"type": "output_text", "text": text, "annotations": []}
            yield self.event(
                "response.output_text.done",
                item_id=item["id"],
                output_index=index,
                content_index=0,
                text=text,
            )
            yield self.event(
                "response.content_part.done",
                item_id=item["id"],
                output_index=index,
                content_index=0,
                part=part,
            )
            done = {**item, "status": "completed", "content": [part]}
            self.output.append(done)
            yield self.event("response.output_item.done", output_index=index, item=done)
            self.item = None
        self.block = None

    def reasoning(self, step: Reasoning) -> Iterator[Frame]:
        number = self.ids.next()
        item_id, index = f"rs_{number}", len(self.output)
        text = "".join(step.chunks)
        yield self.event(
            "response.output_item.added",
            output_index=index,
            item={"id": item_id, "type": "reasoning", "summary": []},
        )
        part = {"type": "summary_text", "text": ""}
        common = {"item_id": item_id, "output_index": index, "summary_index": 0}
        yield self.event("response.reasoning_summary_part.added", **common, part=part)
        for chunk in step.chunks:
            yield self.event("response.reasoning_summary_text.delta", **common, delta=chunk)
        yield self.event("response.reasoning_summary_text.done", **common, text=text)
        done_part = {"type": "summary_text", "text": text}
        yield self.event("response.reasoning_summary_part.done", **common, part=done_part)
        item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": [done_part]}
        if self.encrypted:
            item["encrypted_content"] = step.opaque or f"enc-{number}"
        self.output.append(item)
        yield self.event("response.output_item.done", output_index=index, item=item)

    def tool_call(self, step: ToolCall) -> Iterator[Frame]:
        number = self.ids.next()
        index = len(self.output)
        item = {
            "id": f"fc_{number}",
            "type": "function_call",
            "status": "in_progress",
            "call_id": step.call_id or f"call_{number}",
            "name": step.name,
            "arguments": "",
        }
        yield self.event("response.output_item.added", output_index=index, item=item)
        text = arguments_text(step)
        for position, fragment in enumerate(split(text, step.chunks)):
            yield self.event(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=index,
                delta=fragment,
            )
            yield from paused(step, position)
        yield self.event(
            "response.function_call_arguments.done",
            item_id=item["id"],
            output_index=index,
            arguments=text,
        )
        done = {**item, "status": "completed", "arguments": text}
        self.output.append(done)
        yield self.event("response.output_item.done", output_index=index, item=done)

    def finish(self) -> Iterator[Frame]:
        prompt, completion, cached = self.usage()
        usage = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        }
        if self.stop() == "max_tokens":
            response = self.response(
                "incomplete", usage=usage, incomplete_details={"reason": "max_output_tokens"}
            )
            yield self.event("response.incomplete", response=response)
        else:
            yield self.event("response.completed", response=self.response("completed", usage=usage))

    def overflow_message(self) -> str:
        return (
            "Your input exceeds the context window of this model. Please adjust your input "
            "and try again."
        )

    def error(self, step: StreamError) -> Iterator[Frame]:
        code = {"context_overflow": "context_length_exceeded", "overloaded": "server_is_overloaded"}
        message = step.message or (
            self.overflow_message() if step.kind == "context_overflow" else "The server is busy"
        )
        error = {"code": code.get(step.kind, step.kind), "message": message}
        yield self.event("response.failed", response=self.response("failed", error=error))


class AnthropicRenderer(Renderer):
    """Anthropic Messages: message_start, content_block_* per block, message_delta, message_stop."""

    wire = ANTHROPIC

    def __init__(self, reply: Reply, request: Any, ids: Ids) -> None:
        super().__init__(reply, request, ids)
        self.id = f"msg_{ids.next()}"
        self.index = -1

    def event(self, kind: str, **fields: Any) -> bytes:
        return sse({"type": kind, **fields}, event=kind)

    def start(self) -> Iterator[Frame]:
        prompt, _, cached = self.usage()
        message: dict[str, Any] = {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": prompt - cached,
                "cache_read_input_tokens": cached,
                "cache_creation_input_tokens": 0,
                "output_tokens": 1,
            },
        }
        yield self.event("message_start", message=message)
        yield self.event("ping")

    def open_block(self, block: dict[str, Any]) -> bytes:
        self.index += 1
        return self.event("content_block_start", index=self.index, content_block=block)

    def delta(self, delta: dict[str, Any]) -> bytes:
        return self.event("content_block_delta", index=self.index, delta=delta)

    def open_text(self) -> Iterator[Frame]:
        yield self.open_block({"type": "text", "text": ""})

    def text_delta(self, chunk: str) -> Iterator[Frame]:
        yield self.delta({"type": "text_delta", "text": chunk})

    def close_block(self) -> Iterator[Frame]:
        if self.block is not None:
            yield self.event("content_block_stop", index=self.index)
        self.block = None

    def reasoning(self, step: Reasoning) -> Iterator[Frame]:
        yield self.open_block({"type": "thinking", "thinking": "", "signature": ""})
        for chunk in step.chunks:
            yield self.delta({"type": "thinking_delta", "thinking": chunk})
        signature = step.opaque or f"sig-{self.ids.next()}"
        yield self.delta({"type": "signature_delta", "signature": signature})

    def tool_call(self, step: ToolCall) -> Iterator[Frame]:
        call_id = step.call_id or f"toolu_{self.ids.next():02d}"
        yield self.open_block({"type": "tool_use", "id": call_id, "name": step.name, "input": {}})
        for position, fragment in enumerate(split(arguments_text(step), step.chunks)):
            yield self.delta({"type": "input_json_delta", "partial_json": fragment})
            yield from paused(step, position)

    def finish(self) -> Iterator[Frame]:
        _, completion, _ = self.usage()
        stop = {"stop": "end_turn", "tool_calls": "tool_use"}.get(self.stop(), self.stop())
        yield self.event(
            "message_delta",
            delta={"stop_reason": stop, "stop_sequence": None},
            usage={"output_tokens": completion},
        )
        yield self.event("message_stop")

    def overflow_message(self) -> str:
        return "prompt is too long: 210000 tokens > 200000 maximum"

    def error_body(self, error: HttpError) -> dict[str, Any]:
        message = error.message or "error"
        if error.context_overflow:
            message = self.overflow_message()
        return {
            "type": "error",
            "error": {
                "type": error.error_type or _anthropic_type(error.status),
                "message": message,
            },
        }

    def error(self, step: StreamError) -> Iterator[Frame]:
        kinds = {
            "overloaded": ("overloaded_error", "Overloaded"),
            "server_error": ("api_error", "Internal server error"),
            "context_overflow": ("invalid_request_error", self.overflow_message()),
        }
        kind, message = kinds.get(step.kind, (step.kind, step.kind))
        yield self.event("error", error={"type": kind, "message": step.message or message})


def _anthropic_type(status: int) -> str:
    return {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error")


RENDERERS: dict[str, type[Renderer]] = {
    CHAT: ChatRenderer,
    RESPONSES: ResponsesRenderer,
    ANTHROPIC: AnthropicRenderer,
}
