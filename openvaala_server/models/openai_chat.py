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

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from openvaala_server.config import ModelConfig
from openvaala_server.domain import catalog
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
from openvaala_server.models import openai_chat_wire as wire
from openvaala_server.models.assembly import Assembler
from openvaala_server.models.base import (
    ModelEvent,
    ModelRequest,
    StreamEnded,
    TextDelta,
    ToolCallRequested,
    ToolSpec,
)
from openvaala_server.models.http_client import KeptClient
from openvaala_server.models.openai_chat_stream import OpenAIChatStream
from openvaala_server.models.server_usage import Counter
from openvaala_server.protocol import codec

if TYPE_CHECKING:
    import httpx

DEFAULT_BASE_URL = "https://api.openai.com/v1"
OLLAMA_PORT = 11434


class OpenAIChatProvider:
    def __init__(self, config: ModelConfig, *, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.client = KeptClient(http.read_timeout_s(config), client)
        self.base_url = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        self.official = urlsplit(self.base_url).hostname == "api.openai.com"
        self.label = (
            "OpenAI"
            if self.official
            else f"the OpenAI-compatible server at {http.host_label(self.base_url)}"
        )
        self.assembler: Assembler[Wire, wire.Message] = Assembler(item_wire, item_wire_images, fold)
        # Usage counted by the server when its stream reports none (models/server_usage.py):
        # only a server of the user's can be asked.
        self.counter = (
            None
            if self.official or not catalog.probed_server(config.provider, self.base_url)
            else Counter(self.base_url.removesuffix("/v1"))
        )
        self.wire_cache = self.assembler.cache

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

    def build_body(self, request: ModelRequest) -> wire.Body:
        body: wire.Body = {
            "model": self.config.model,
            "messages": self.assembler.messages(
                request.items, request.images, request.owner, system_message(request)
            ),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        field = self.config.options.get("max_tokens_field")
        if field not in ("max_tokens", "max_completion_tokens"):
            field = "max_completion_tokens" if self.official else "max_tokens"
        if field == "max_tokens":
            body["max_tokens"] = self.config.max_output_tokens
        else:
            body["max_completion_tokens"] = self.config.max_output_tokens
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
        ended: StreamEnded | None = None
        reply: list[str] = []
        async for event in http.stream_model_events(
            endpoint, self.client, url, headers, body, parser
        ):
            if isinstance(event, StreamEnded):
                ended = event  # after the usage, if the server is asked for it below
                continue
            if isinstance(event, TextDelta):
                reply.append(event.text)
            elif isinstance(event, ToolCallRequested):
                reply.append(event.name + event.arguments_text)
            yield event
        if parser.usage is None and self.counter is not None:
            usage = await self.counter.count(self.client, headers, body, "".join(reply))
            if usage is not None:
                yield usage
        if ended is not None:
            yield ended


def tool_spec(tool: ToolSpec) -> wire.Tool:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


# The wire form of one item: a tool call with the assistant message of that call alone; or a
# message with, for a tool result that returned images, the user message that carries them (a
# tool message holds text only). None when the item sends nothing.
CallWire = tuple[Literal[True], wire.ToolCall, wire.AssistantMessage]
MessageWire = tuple[Literal[False], wire.Message, wire.UserMessage | None]
Wire = CallWire | MessageWire | None


def _message(message: wire.Message, follow: wire.UserMessage | None = None) -> MessageWire:
    return False, message, follow


def _user(content: str | list[wire.ContentPart]) -> MessageWire:
    return _message({"role": "user", "content": content})


def item_wire(item: Item) -> Wire:
    """The pure per-item part of `to_messages` (cached per provider by `http.WireCache`)."""
    kind = item.get("type")
    if kind == USER_MESSAGE:
        return _user(str(item.get("text", "")))
    if kind == AGENT_MESSAGE:
        text = http.agent_text(item)
        # An interrupted message may be empty; the API rejects empty assistant messages.
        return _message({"role": "assistant", "content": text}) if text else None
    if kind == TOOL_CALL:
        call: wire.ToolCall = {
            "id": str(item.get("callId", "")),
            "type": "function",
            "function": {
                "name": str(item.get("name", "")),
                "arguments": codec.text(item.get("arguments") or {}),
            },
        }
        alone: wire.AssistantMessage = {"role": "assistant", "content": None, "tool_calls": [call]}
        return True, call, alone
    if kind == TOOL_RESULT:
        output = http.tool_result_text(item)
        if item.get("isError"):
            output = f"Error: {output}"
        call_id = str(item.get("callId", ""))
        return _message({"role": "tool", "tool_call_id": call_id, "content": output})
    if kind == SUMMARY:
        return _user(http.summary_text(item))
    if kind == NOTICE:
        return _user(http.notice_text(item))
    return None  # reasoning: not sent back (see module docstring)


def _image_parts(item: Item, data: Mapping[str, str]) -> tuple[list[str], list[wire.ImagePart]]:
    sent, notes = image_parts.split(item, data)
    parts: list[wire.ImagePart] = [
        {"type": "image_url", "image_url": {"url": image_parts.data_url(ref, b64)}}
        for ref, b64 in sent
    ]
    return notes, parts


def item_wire_images(item: Item, data: Mapping[str, str]) -> Wire:
    """`item_wire` of an item with images: user content parts with `image_url` data URLs. A tool
    message holds text only, so a tool result's images follow in a user message of their own,
    which `to_messages` sends after the rest of the tool messages of its group."""
    plain = item_wire(item)
    if plain is None or plain[0]:
        return plain
    _, value, _ = plain
    notes, parts = _image_parts(item, data)
    if value["role"] == "tool":
        result: wire.ToolMessage = {
            **value,
            "content": image_parts.with_notes(value["content"], notes),
        }
        if not parts:
            return _message(result)
        label: wire.TextPart = {
            "type": "text",
            "text": f"The images returned by the {item.get('name', 'tool')} call above:",
        }
        return _message(result, {"role": "user", "content": [label, *parts]})
    if value["role"] != "user":
        return plain  # only user messages and tool results carry images
    text = image_parts.with_notes(str(value.get("content") or ""), notes)
    content: list[wire.ContentPart] = [*parts]
    if text:
        content.insert(0, {"type": "text", "text": text})
    return _user(content)


def to_messages(
    request: ModelRequest, cache: http.WireCache[Wire] | None = None
) -> list[wire.Message]:
    """The `messages` of a request, assembled whole; with `cache`, finished items' wire forms
    are reused."""
    paired = http.pair_tool_calls(request.items)
    wires = image_parts.wires(paired, cache, item_wire, item_wire_images, request.images)
    messages = system_message(request)
    fold(messages, paired, wires, False)
    return messages


def system_message(request: ModelRequest) -> list[wire.Message]:
    """The instructions as the system message (the first of the request's messages)."""
    if not request.instructions:
        return []
    return [{"role": "system", "content": request.instructions}]


def fold(
    messages: list[wire.Message], paired: list[Item], wires: list[Wire], later_turn: bool
) -> None:
    """Append the messages of `wires` to `messages` (models/assembly.py `Fold`).

    Cached objects are shared between requests, so they are never modified here: an assistant
    message that gets (more) tool calls is first replaced by a copy this call owns.
    """
    append = messages.append
    # The last message's tool calls, if this call owns it.
    owned: list[wire.ToolCall] | None = None
    held: list[wire.UserMessage] = []  # tool results' images, sent once their tool messages end
    for entry in wires:
        if entry is None:
            continue
        if held and (entry[0] or entry[1]["role"] != "tool"):
            messages.extend(held)  # the tool messages of a group stay together
            held.clear()
            owned = None
        if not entry[0]:
            _, message, follow = entry
            if follow is not None:
                held.append(follow)
            append(message)
            owned = None
            continue
        _, call, alone = entry
        last = messages[-1] if messages else None
        if owned is not None:
            owned.append(call)
        elif last is not None and last["role"] == "assistant":
            # Calls join the assistant message before them (its text, or earlier calls).
            owned = [*last.get("tool_calls", ()), call]
            messages[-1] = {**last, "tool_calls": owned}
        else:
            append(alone)
    messages.extend(held)
