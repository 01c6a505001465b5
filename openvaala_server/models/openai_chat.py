"""The Chat Completions provider (`provider = "openai"`): OpenAI and compatible servers.

Works against any compatible `base_url` (vLLM, llama.cpp, LM Studio, Ollama, OpenRouter ...).
Notes on choices made here:

- Reasoning items are not sent back: Chat Completions has no field for them (OpenAI keeps its
  reasoning hidden), and servers that stream `reasoning_content`/`reasoning` deltas do not expect
  it back.
- Chat has no error flag on tool results, so a failed tool's output is prefixed with "Error: ".
- The official API gets `max_completion_tokens` (reasoning models reject `max_tokens`); other
  servers get the widely understood `max_tokens`. Option `max_tokens_field` overrides.
- Ollama (option `ollama = true`, or a base_url on port 11434) truncates silently at its default
  context size, so every request carries `options.num_ctx` = the configured context window (or
  option `num_ctx`).
- The stream's events are read by the pure parser in openai_chat_stream.py.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from urllib.parse import urlsplit

import httpx

from openvaala_server.config import ModelConfig
from openvaala_server.domain.records import (
    AGENT_MESSAGE,
    NOTICE,
    SUMMARY,
    TOOL_CALL,
    TOOL_RESULT,
    USER_MESSAGE,
    Item,
)
from openvaala_server.models import http, image_parts
from openvaala_server.models.base import ModelEvent, ModelRequest, ToolSpec
from openvaala_server.models.http_client import KeptClient
from openvaala_server.models.openai_chat_stream import OpenAIChatStream

DEFAULT_BASE_URL = "https://api.openai.com/v1"
OLLAMA_PORT = 11434


class OpenAIChatProvider:
    def __init__(self, config: ModelConfig, *, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.client = KeptClient(http.timeout_for(config), client)
        self.base_url = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        self.official = urlsplit(self.base_url).hostname == "api.openai.com"
        self.label = (
            "OpenAI"
            if self.official
            else f"the OpenAI-compatible server at {http.host_label(self.base_url)}"
        )
        self.wire_cache: http.WireCache[Wire] = http.WireCache(item_wire)

    def retire(self) -> None:
        """Close the kept client once no call uses it (a reload replaced this provider)."""
        self.client.retire()

    async def aclose(self) -> None:
        await self.client.aclose()

    @property
    def is_ollama(self) -> bool:
        if self.config.options.get("ollama") is True:
            return True
        try:
            return urlsplit(self.base_url).port == OLLAMA_PORT
        except ValueError:
            return False

    def build_body(self, request: ModelRequest) -> dict[str, object]:
        body: dict[str, object] = {
            "model": self.config.model,
            "messages": to_messages(request, self.wire_cache),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        field = self.config.options.get("max_tokens_field")
        if field not in ("max_tokens", "max_completion_tokens"):
            field = "max_completion_tokens" if self.official else "max_tokens"
        body[str(field)] = self.config.max_output_tokens
        if request.tools:
            body["tools"] = [tool_spec(tool) for tool in request.tools]
        effort = self.config.options.get("reasoning_effort")
        if isinstance(effort, str):
            body["reasoning_effort"] = effort
        if self.is_ollama:
            num_ctx = self.config.options.get("num_ctx", self.config.context_window)
            body["options"] = {"num_ctx": num_ctx}
        return body

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        key = http.api_key(self.config, self.label)
        endpoint = http.Endpoint(self.label, self.config, key)
        headers = {"Content-Type": "application/json", **http.extra_headers(self.config)}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = f"{self.base_url}/chat/completions"

        body = self.build_body(request)
        parser = OpenAIChatStream(endpoint)
        async for event in http.stream_model_events(
            endpoint, self.client, url, headers, body, parser
        ):
            yield event


def tool_spec(tool: ToolSpec) -> dict[str, object]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


# The wire form of one item: (is a tool call, message or call object, for a call the assistant
# message of that call alone), or None when the item sends nothing.
Wire = tuple[bool, dict[str, object], dict[str, object] | None] | None


def item_wire(item: Item) -> Wire:
    """The pure per-item part of `to_messages` (cached per provider by `http.WireCache`)."""
    kind = item.get("type")
    if kind == USER_MESSAGE:
        return False, {"role": "user", "content": str(item.get("text", ""))}, None
    if kind == AGENT_MESSAGE:
        text = http.agent_text(item)
        # An interrupted message may be empty; the API rejects empty assistant messages.
        return (False, {"role": "assistant", "content": text}, None) if text else None
    if kind == TOOL_CALL:
        call: dict[str, object] = {
            "id": str(item.get("callId", "")),
            "type": "function",
            "function": {
                "name": str(item.get("name", "")),
                "arguments": json.dumps(item.get("arguments") or {}, ensure_ascii=False),
            },
        }
        return True, call, {"role": "assistant", "content": None, "tool_calls": [call]}
    if kind == TOOL_RESULT:
        output = http.tool_result_text(item)
        if item.get("isError"):
            output = f"Error: {output}"
        call_id = str(item.get("callId", ""))
        return False, {"role": "tool", "tool_call_id": call_id, "content": output}, None
    if kind == SUMMARY:
        return False, {"role": "user", "content": http.summary_text(item)}, None
    if kind == NOTICE:
        return False, {"role": "user", "content": http.notice_text(item)}, None
    return None  # reasoning: not sent back (see module docstring)


def _image_parts(item: Item, data: Mapping[str, str]) -> tuple[list[str], list[dict[str, object]]]:
    sent, notes = image_parts.split(item, data)
    parts: list[dict[str, object]] = [
        {"type": "image_url", "image_url": {"url": image_parts.data_url(ref, b64)}}
        for ref, b64 in sent
    ]
    return notes, parts


def item_wire_images(item: Item, data: Mapping[str, str]) -> Wire:
    """`item_wire` of an item with images: user content parts with `image_url` data URLs. A tool
    message holds text only, so a tool result's images follow in a user message of their own
    (`_images_after_tools` moves it past the rest of the tool messages of its group)."""
    wire = item_wire(item)
    if wire is None:
        return None
    _, value, alone = wire
    notes, parts = _image_parts(item, data)
    if item.get("type") == TOOL_RESULT:
        value = {**value, "content": image_parts.with_notes(str(value["content"]), notes)}
        if parts:
            label = f"The images returned by the {item.get('name', 'tool')} call above:"
            follow = {"role": "user", "content": [{"type": "text", "text": label}, *parts]}
            value = {**value, _FOLLOWUP: follow}
        return False, value, alone
    text = image_parts.with_notes(str(value.get("content") or ""), notes)
    content = [*([{"type": "text", "text": text}] if text else []), *parts]
    return False, {**value, "content": content}, alone


# Key (never sent) on a tool message whose images follow in a user message.
_FOLLOWUP = "_openvaala_images"


def to_messages(
    request: ModelRequest, cache: http.WireCache[Wire] | None = None
) -> list[dict[str, object]]:
    """The `messages` of a request; with `cache`, finished items' wire forms are reused.

    Cached objects are shared between requests, so they are never modified here: an assistant
    message that gets (more) tool calls is first replaced by a copy this call owns.
    """
    paired = http.pair_tool_calls(request.items)
    wires = image_parts.wires(paired, cache, item_wire, item_wire_images, request.images)
    messages: list[dict[str, object]] = []
    if request.instructions:
        messages.append({"role": "system", "content": request.instructions})
    append = messages.append
    # The last message's tool calls, if this call owns it.
    owned: list[dict[str, object]] | None = None
    held: list[dict[str, object]] = []  # tool results' images, sent once their tool messages end
    for wire in wires:
        if wire is None:
            continue
        is_call, value, alone = wire
        if held and (is_call or value.get("role") != "tool"):
            messages.extend(held)  # the tool messages of a group stay together
            held.clear()
            owned = None
        if not is_call:
            follow = value.get(_FOLLOWUP)
            if isinstance(follow, dict):
                held.append(follow)
                value = {k: v for k, v in value.items() if k != _FOLLOWUP}
            append(value)
            owned = None
        elif owned is not None:
            owned.append(value)
        elif messages and messages[-1]["role"] == "assistant":
            # Calls join the assistant message before them (its text, or earlier calls).
            last = messages[-1]
            calls = last.get("tool_calls")
            owned = [*(calls if isinstance(calls, list) else ()), value]
            messages[-1] = {**last, "tool_calls": owned}
        else:
            assert alone is not None  # a call's wire form always has it
            append(alone)
    messages.extend(held)
    return messages
