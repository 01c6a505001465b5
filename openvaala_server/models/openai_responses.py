"""The Responses API provider (`provider = "openai_responses"`): `POST {base_url}/responses`.

Stateless by design: `store: false`, the whole history is sent each call, and reasoning survives
between calls only as `encrypted_content` (requested via `include`). A reasoning item without
encrypted content cannot be resolved by a stateless server, so it is never sent back.

Reasoning context (`reasoning_context` in the model config, default ``current_turn``):

- ``current_turn`` sends back only the reasoning items after the last user message (the
  reasoning of the tool-calling steps of the turn in progress);
- ``all_turns`` sends back the reasoning items of all earlier turns too.

When the config sets the mode explicitly it is also requested as ``reasoning.context`` (the field
newer OpenAI models accept); it is left out otherwise, because older models reject unknown
reasoning fields. The mode the provider applied is read from the echo ``response.reasoning.context``
in ``response.created``/``response.completed``. **Assumption:** when the provider echoes nothing,
the mode we applied to the input (the requested one) is what took effect; that is what
`UsageReported.reasoning_context` reports. Each reasoning item the provider returns is stamped with
the mode known when it finished (``providerData.reasoningContext``: the ``response.created`` echo,
else the requested mode), so it is persisted with the history (domain/context.py,
`reasoning_context`).

Options: `reasoning_effort` and `reasoning_summary` (e.g. "auto", needed to receive reasoning
summaries) go into the `reasoning` object; they too are opt-in because non-reasoning models reject
them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from functools import partial
from typing import TYPE_CHECKING

from openvaala_server.config import ModelConfig
from openvaala_server.domain.context import ALL_TURNS, CURRENT_TURN
from openvaala_server.domain.records import (
    AGENT_MESSAGE,
    NOTICE,
    REASONING,
    SUMMARY,
    TOOL_CALL,
    TOOL_RESULT,
    USER_MESSAGE,
    Item,
)
from openvaala_server.models import http, image_parts
from openvaala_server.models import openai_responses_wire as wire
from openvaala_server.models.assembly import Assembler
from openvaala_server.models.base import ModelEvent, ModelRequest, ToolSpec
from openvaala_server.models.http_client import KeptClient
from openvaala_server.models.openai_responses_stream import PROVIDER_TAG, OpenAIResponsesStream
from openvaala_server.protocol import codec

if TYPE_CHECKING:
    import httpx

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIResponsesProvider:
    def __init__(self, config: ModelConfig, *, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.client = KeptClient(http.read_timeout_s(config), client)
        self.base_url = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        host = http.host_label(self.base_url)
        self.label = "OpenAI" if host == "api.openai.com" else f"the Responses API at {host}"
        self.assembler: Assembler[Wire, wire.InputItem] = Assembler(
            item_wire, item_wire_images, partial(fold, self.reasoning_context)
        )
        self.wire_cache = self.assembler.cache

    def retire(self) -> None:
        """Close the kept client once no call uses it (a reload replaced this provider)."""
        self.client.retire()

    async def aclose(self) -> None:
        await self.client.aclose()

    @property
    def reasoning_context(self) -> str:
        return self.config.reasoning_context or CURRENT_TURN

    def build_body(self, request: ModelRequest) -> wire.Body:
        body: wire.Body = {
            "model": self.config.model,
            "input": self.assembler.messages(request.items, request.images, request.owner),
            "stream": True,
            "store": False,
            "include": ["reasoning.encrypted_content"],
            "max_output_tokens": self.config.max_output_tokens,
        }
        if request.instructions:
            body["instructions"] = request.instructions
        if request.tools:
            body["tools"] = [tool_spec(tool) for tool in request.tools]
        reasoning: wire.ReasoningOptions = {}
        effort = self.config.options.get("reasoning_effort")
        if isinstance(effort, str):
            reasoning["effort"] = effort
        summary = self.config.options.get("reasoning_summary")
        if isinstance(summary, str):
            reasoning["summary"] = summary
        if self.config.reasoning_context is not None:
            reasoning["context"] = self.config.reasoning_context
        if reasoning:
            body["reasoning"] = reasoning
        return body

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        key = http.api_key(self.config, self.label)
        endpoint = http.Endpoint(self.label, self.config, key)
        headers = {"Content-Type": "application/json", **http.extra_headers(self.config)}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = f"{self.base_url}/responses"
        body = self.build_body(request)

        parser = OpenAIResponsesStream(endpoint, self.reasoning_context)
        async for event in http.stream_model_events(
            endpoint, self.client, url, headers, body, parser
        ):
            yield event


def tool_spec(tool: ToolSpec) -> wire.Tool:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        # strict mode demands every property be required; our tools' schemas are not written so.
        "strict": False,
    }


def _user(text: str) -> wire.Message:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _assistant(text: str) -> wire.Message:
    part: wire.OutputText = {"type": "output_text", "text": text}
    return {"type": "message", "role": "assistant", "content": [part]}


def _reasoning_input(item: Item) -> wire.Reasoning | None:
    data = item.get("providerData")
    if not isinstance(data, dict) or data.get("provider") != PROVIDER_TAG:
        return None  # another provider's reasoning (or a partial one) means nothing here
    encrypted = data.get("encrypted_content")
    reasoning_id = data.get("id")
    if not isinstance(encrypted, str) or not isinstance(reasoning_id, str):
        return None
    summary = data.get("summary")
    if not isinstance(summary, list):
        text = str(item.get("text", ""))
        summary = [{"type": "summary_text", "text": text}] if text else []
    return {
        "type": "reasoning",
        "id": reasoning_id,
        "summary": summary,
        "encrypted_content": encrypted,
    }


# The wire form of one item: (is reasoning, input object), or None for nothing sent.
Wire = tuple[bool, wire.InputItem] | None


def item_wire(item: Item) -> Wire:
    """The pure per-item part of `to_input` (cached per provider by `http.WireCache`).

    Whether a reasoning item is sent depends on where the current turn starts: `to_input`
    decides that on every call; this only says that the item is reasoning.
    """
    kind = item.get("type")
    if kind == USER_MESSAGE:
        return False, _user(str(item.get("text", "")))
    if kind == AGENT_MESSAGE:
        text = http.agent_text(item)
        return (False, _assistant(text)) if text else None
    if kind == REASONING:
        reasoning = _reasoning_input(item)
        return (True, reasoning) if reasoning is not None else None
    if kind == TOOL_CALL:
        call: wire.FunctionCall = {
            "type": "function_call",
            "call_id": str(item.get("callId", "")),
            "name": str(item.get("name", "")),
            "arguments": codec.text(item.get("arguments") or {}),
        }
        return False, call
    if kind == TOOL_RESULT:
        output = http.tool_result_text(item)
        result: wire.FunctionCallOutput = {
            "type": "function_call_output",
            "call_id": str(item.get("callId", "")),
            "output": f"Error: {output}" if item.get("isError") else output,
        }
        return False, result
    if kind == SUMMARY:
        return False, _user(http.summary_text(item))
    if kind == NOTICE:
        return False, _user(http.notice_text(item))
    return None


def item_wire_images(item: Item, data: Mapping[str, str]) -> Wire:
    """`item_wire` of an item with images: `input_image` parts with data URLs, in the user
    message or in the function call's output (which then is a list of parts)."""
    plain = item_wire(item)
    if plain is None:
        return None
    _, value = plain
    sent, notes = image_parts.split(item, data)
    parts: list[wire.InputImage] = [
        {"type": "input_image", "image_url": image_parts.data_url(ref, b64), "detail": "auto"}
        for ref, b64 in sent
    ]
    if value["type"] == "function_call_output":
        text = image_parts.with_notes(str(value["output"]), notes)
        output: str | list[wire.InputText | wire.InputImage] = text
        if parts:
            output = [{"type": "input_text", "text": text}, *parts]
        result: wire.FunctionCallOutput = {**value, "output": output}
        return False, result
    if value["type"] != "message":
        return plain  # only user messages and tool results carry images
    text = image_parts.with_notes(str(item.get("text", "")), notes)
    content: list[wire.InputText | wire.OutputText | wire.InputImage] = [*parts]
    if text:
        content.insert(0, {"type": "input_text", "text": text})
    message: wire.Message = {**value, "content": content}
    return False, message


def to_input(
    items: list[Item],
    reasoning_context: str,
    cache: http.WireCache[Wire] | None = None,
    images: Mapping[str, str] | None = None,
) -> list[wire.InputItem]:
    """The `input` of a request, assembled whole; with `cache`, finished items' wire forms are
    reused."""
    paired = http.pair_tool_calls(items)
    wires = image_parts.wires(paired, cache, item_wire, item_wire_images, images or {})
    out: list[wire.InputItem] = []
    fold(reasoning_context, out, paired, wires, False)
    return out


def fold(
    reasoning_context: str,
    out: list[wire.InputItem],
    paired: list[Item],
    wires: list[Wire],
    later_turn: bool,
) -> None:
    """Append the input items of `wires` to `out` (models/assembly.py `Fold`, with the mode
    bound): reasoning is sent back from the current turn only, unless `all_turns`."""
    if reasoning_context == ALL_TURNS:
        turn_start = -1
    elif later_turn:  # a user message follows: all of it is earlier turns
        turn_start = len(paired)
    else:
        # Reasoning before this index belongs to earlier turns.
        turn_start = http.last_user_index(paired)
    append = out.append
    for index, entry in enumerate(wires):
        if entry is None:
            continue
        is_reasoning, value = entry
        if not is_reasoning or index > turn_start:
            append(value)
