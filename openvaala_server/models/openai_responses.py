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

import json
from collections.abc import AsyncIterator, Mapping

import httpx

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
from openvaala_server.models.base import ModelEvent, ModelRequest, ToolSpec
from openvaala_server.models.http_client import KeptClient
from openvaala_server.models.openai_responses_stream import PROVIDER_TAG, OpenAIResponsesStream

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIResponsesProvider:
    def __init__(self, config: ModelConfig, *, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.client = KeptClient(http.timeout_for(config), client)
        self.base_url = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        host = http.host_label(self.base_url)
        self.label = "OpenAI" if host == "api.openai.com" else f"the Responses API at {host}"
        self.wire_cache: http.WireCache[Wire] = http.WireCache(item_wire)

    def retire(self) -> None:
        """Close the kept client once no call uses it (a reload replaced this provider)."""
        self.client.retire()

    async def aclose(self) -> None:
        await self.client.aclose()

    @property
    def reasoning_context(self) -> str:
        return self.config.reasoning_context or CURRENT_TURN

    def build_body(self, request: ModelRequest) -> dict[str, object]:
        body: dict[str, object] = {
            "model": self.config.model,
            "input": to_input(
                request.items, self.reasoning_context, self.wire_cache, request.images
            ),
            "stream": True,
            "store": False,
            "include": ["reasoning.encrypted_content"],
            "max_output_tokens": self.config.max_output_tokens,
        }
        if request.instructions:
            body["instructions"] = request.instructions
        if request.tools:
            body["tools"] = [tool_spec(tool) for tool in request.tools]
        reasoning: dict[str, object] = {}
        for option, key in (("reasoning_effort", "effort"), ("reasoning_summary", "summary")):
            value = self.config.options.get(option)
            if isinstance(value, str):
                reasoning[key] = value
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


def tool_spec(tool: ToolSpec) -> dict[str, object]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        # strict mode demands every property be required; our tools' schemas are not written so.
        "strict": False,
    }


def _message(role: str, text: str) -> dict[str, object]:
    part = "input_text" if role == "user" else "output_text"
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


def _reasoning_input(item: Item) -> dict[str, object] | None:
    data = item.get("providerData")
    if not isinstance(data, dict) or data.get("provider") != PROVIDER_TAG:
        return None  # another provider's reasoning (or a partial one) means nothing here
    encrypted = data.get("encrypted_content")
    if not isinstance(encrypted, str) or not isinstance(data.get("id"), str):
        return None
    summary = data.get("summary")
    if not isinstance(summary, list):
        text = str(item.get("text", ""))
        summary = [{"type": "summary_text", "text": text}] if text else []
    return {
        "type": "reasoning",
        "id": data["id"],
        "summary": summary,
        "encrypted_content": encrypted,
    }


# The wire form of one item: (is reasoning, input object), or None for nothing sent.
Wire = tuple[bool, dict[str, object]] | None


def item_wire(item: Item) -> Wire:
    """The pure per-item part of `to_input` (cached per provider by `http.WireCache`).

    Whether a reasoning item is sent depends on where the current turn starts: `to_input`
    decides that on every call; this only says that the item is reasoning.
    """
    kind = item.get("type")
    if kind == USER_MESSAGE:
        return False, _message("user", str(item.get("text", "")))
    if kind == AGENT_MESSAGE:
        text = http.agent_text(item)
        return (False, _message("assistant", text)) if text else None
    if kind == REASONING:
        reasoning = _reasoning_input(item)
        return (True, reasoning) if reasoning is not None else None
    if kind == TOOL_CALL:
        return False, {
            "type": "function_call",
            "call_id": str(item.get("callId", "")),
            "name": str(item.get("name", "")),
            "arguments": json.dumps(item.get("arguments") or {}, ensure_ascii=False),
        }
    if kind == TOOL_RESULT:
        output = http.tool_result_text(item)
        return False, {
            "type": "function_call_output",
            "call_id": str(item.get("callId", "")),
            "output": f"Error: {output}" if item.get("isError") else output,
        }
    if kind == SUMMARY:
        return False, _message("user", http.summary_text(item))
    if kind == NOTICE:
        return False, _message("user", http.notice_text(item))
    return None


def item_wire_images(item: Item, data: Mapping[str, str]) -> Wire:
    """`item_wire` of an item with images: `input_image` parts with data URLs, in the user
    message or in the function call's output (which then is a list of parts)."""
    wire = item_wire(item)
    if wire is None:
        return None
    _, value = wire
    sent, notes = image_parts.split(item, data)
    parts: list[dict[str, object]] = [
        {"type": "input_image", "image_url": image_parts.data_url(ref, b64), "detail": "auto"}
        for ref, b64 in sent
    ]
    if item.get("type") == TOOL_RESULT:
        text = image_parts.with_notes(str(value["output"]), notes)
        output: str | list[dict[str, object]] = text
        if parts:
            output = [{"type": "input_text", "text": text}, *parts]
        return False, {**value, "output": output}
    text = image_parts.with_notes(str(item.get("text", "")), notes)
    content = [*([{"type": "input_text", "text": text}] if text else []), *parts]
    return False, {**value, "content": content}


def to_input(
    items: list[Item],
    reasoning_context: str,
    cache: http.WireCache[Wire] | None = None,
    images: Mapping[str, str] | None = None,
) -> list[dict[str, object]]:
    """The `input` of a request; with `cache`, finished items' wire forms are reused."""
    paired = http.pair_tool_calls(items)
    wires = image_parts.wires(paired, cache, item_wire, item_wire_images, images or {})
    # Reasoning before this index belongs to earlier turns (sent back only with all_turns).
    turn_start = -1 if reasoning_context == ALL_TURNS else http.last_user_index(paired)
    out: list[dict[str, object]] = []
    append = out.append
    for index, wire in enumerate(wires):
        if wire is None:
            continue
        is_reasoning, value = wire
        if not is_reasoning or index > turn_start:
            append(value)
    return out
