"""The Anthropic Messages API provider (`provider = "anthropic"`): `POST {base_url}/v1/messages`.

- Thinking blocks are sent back only with their signature (`provider_data.signature`, kept from
  `signature_delta`) or as `redacted_thinking`; the API rejects unsigned thinking, so partial or
  foreign reasoning is dropped. Extended thinking is enabled with option `thinking_budget_tokens`.
- Consecutive items of one role become one message (the API wants alternating roles), with tool
  results first in a user message as the API requires.
- Input usage is `input_tokens` plus both cache counters (Anthropic reports them separately).
- The stream's events are read by the pure parser in anthropic_stream.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING

from openvaala_server.config import ModelConfig
from openvaala_server.domain.images import ImageRef
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
from openvaala_server.models import anthropic_wire as wire
from openvaala_server.models import http, image_parts
from openvaala_server.models.anthropic_stream import PROVIDER_TAG, AnthropicStream
from openvaala_server.models.assembly import Assembler
from openvaala_server.models.base import ModelEvent, ModelRequest, ToolSpec
from openvaala_server.models.http_client import KeptClient

if TYPE_CHECKING:
    import httpx

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


class AnthropicProvider:
    def __init__(self, config: ModelConfig, *, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.client = KeptClient(http.read_timeout_s(config), client)
        self.base_url = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        host = http.host_label(self.base_url)
        self.label = "Anthropic" if host == "api.anthropic.com" else f"the Anthropic API at {host}"
        self.assembler: Assembler[Wire, wire.Message] = Assembler(item_wire, item_wire_images, fold)
        self.wire_cache = self.assembler.cache

    def retire(self) -> None:
        """Close the kept client once no call uses it (a reload replaced this provider)."""
        self.client.retire()

    async def aclose(self) -> None:
        await self.client.aclose()

    def build_body(self, request: ModelRequest) -> wire.Body:
        body: wire.Body = {
            "model": self.config.model,
            "max_tokens": self.config.max_output_tokens,
            "messages": self.assembler.messages(request.items, request.images, request.owner),
            "stream": True,
        }
        if request.instructions:
            body["system"] = request.instructions
        if request.tools:
            body["tools"] = [tool_spec(tool) for tool in request.tools]
        budget = self.config.options.get("thinking_budget_tokens")
        if isinstance(budget, int) and not isinstance(budget, bool) and budget > 0:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        return body

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        key = http.api_key(self.config, self.label)
        endpoint = http.Endpoint(self.label, self.config, key)
        headers = {
            "Content-Type": "application/json",
            "anthropic-version": API_VERSION,
            **http.extra_headers(self.config),
        }
        if key:
            headers["x-api-key"] = key
        url = f"{self.base_url}/v1/messages"
        body = self.build_body(request)

        parser = AnthropicStream(endpoint)
        async for event in http.stream_model_events(
            endpoint, self.client, url, headers, body, parser
        ):
            yield event


def tool_spec(tool: ToolSpec) -> wire.Tool:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def _thinking_block(item: Item) -> wire.ThinkingBlock | wire.RedactedThinkingBlock | None:
    data = item.get("providerData")
    if not isinstance(data, dict) or data.get("provider") != PROVIDER_TAG:
        return None
    redacted = data.get("redacted")
    if isinstance(redacted, str) and redacted:
        return {"type": "redacted_thinking", "data": redacted}
    signature = data.get("signature")
    if isinstance(signature, str) and signature:
        return {"type": "thinking", "thinking": str(item.get("text", "")), "signature": signature}
    return None


def _text(text: str) -> wire.TextBlock:
    return {"type": "text", "text": text}


def _block_for(item: Item) -> tuple[wire.Role, wire.Block] | None:
    kind = item.get("type")
    if kind == USER_MESSAGE:
        text = str(item.get("text", ""))
        return ("user", _text(text)) if text else None
    if kind == AGENT_MESSAGE:
        text = http.agent_text(item)
        # The API rejects empty text blocks and (in the final message) trailing whitespace.
        return ("assistant", _text(text)) if text.strip() else None
    if kind == REASONING:
        block = _thinking_block(item)
        return ("assistant", block) if block is not None else None
    if kind == TOOL_CALL:
        return (
            "assistant",
            {
                "type": "tool_use",
                "id": str(item.get("callId", "")),
                "name": str(item.get("name", "")),
                "input": item.get("arguments") or {},
            },
        )
    if kind == TOOL_RESULT:
        return (
            "user",
            {
                "type": "tool_result",
                "tool_use_id": str(item.get("callId", "")),
                "content": http.tool_result_text(item),
                "is_error": bool(item.get("isError")),
            },
        )
    if kind == SUMMARY:
        return "user", _text(http.summary_text(item))
    if kind == NOTICE:
        return "user", _text(http.notice_text(item))
    return None


# The wire form of one item: (role, content block or blocks, a message of them alone), or None.
Wire = tuple[wire.Role, wire.Block | list[wire.Block], wire.Message] | None


def item_wire(item: Item) -> Wire:
    """The pure per-item part of `to_messages` (cached per provider by `http.WireCache`)."""
    entry = _block_for(item)
    if entry is None:
        return None
    role, block = entry
    return role, block, {"role": role, "content": [block]}


def _image_block(ref: ImageRef, b64: str) -> wire.ImageBlock:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": ref["mediaType"], "data": b64},
    }


def item_wire_images(item: Item, data: Mapping[str, str]) -> Wire:
    """`item_wire` of an item with images: image blocks with base64 sources, before the text of
    a user message (as Anthropic advises) or inside a tool result's content."""
    plain = item_wire(item)
    sent, notes = image_parts.split(item, data)
    blocks = [_image_block(ref, b64) for ref, b64 in sent]
    if plain is not None:
        role, block, _ = plain
        if isinstance(block, dict) and block["type"] == "tool_result":
            text = image_parts.with_notes(str(block["content"]), notes)
            parts: list[wire.TextBlock | wire.ImageBlock] = [_text(text)] if text else []
            result: wire.ToolResultBlock = {**block, "content": [*parts, *blocks]}
            return role, result, {"role": role, "content": [result]}
    text = image_parts.with_notes(str(item.get("text", "")), notes)
    content: list[wire.Block] = [*blocks, *([_text(text)] if text.strip() else [])]
    if not content:
        return None
    return "user", content, {"role": "user", "content": content}


def to_messages(
    items: list[Item],
    cache: http.WireCache[Wire] | None = None,
    images: Mapping[str, str] | None = None,
) -> list[wire.Message]:
    """The `messages` of a request, assembled whole; with `cache`, finished items' wire forms
    are reused."""
    paired = http.pair_tool_calls(items)
    wires = image_parts.wires(paired, cache, item_wire, item_wire_images, images or {})
    messages: list[wire.Message] = []
    fold(messages, paired, wires, False)
    return messages


def fold(
    messages: list[wire.Message], paired: list[Item], wires: list[Wire], later_turn: bool
) -> None:
    """Append the messages of `wires` to `messages` (models/assembly.py `Fold`).

    Cached objects are shared between requests, so they are never modified here: a message that
    gets a second block is first replaced by a copy this call owns.
    """
    append = messages.append
    last_role = messages[-1]["role"] if messages else None
    # The last message's blocks, if this call owns it.
    content: list[wire.Block] | None = None
    for entry in wires:
        if entry is None:
            continue
        role, block, alone = entry
        if role != last_role:
            append(alone)
            last_role = role
            content = None
            continue
        # Consecutive items of one role are one message (the API wants alternating roles).
        if content is None:
            content = list(messages[-1]["content"])
            messages[-1] = {"role": role, "content": content}
        if isinstance(block, list):
            content.extend(block)  # a user message with its images
        elif block["type"] == "tool_result":
            # Tool results must lead a user message; a note merged before them moves after.
            position = sum(1 for b in content if b["type"] == "tool_result")
            content.insert(position, block)
        else:
            content.append(block)
