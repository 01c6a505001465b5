"""The Chat Completions request, as declared types (what `openai_chat.py` builds and sends)."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from openvaala_server.protocol.json_types import JsonObject


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ImageUrl(TypedDict):
    url: str  # a data: URL


class ImagePart(TypedDict):
    type: Literal["image_url"]
    image_url: ImageUrl


ContentPart = TextPart | ImagePart


class Function(TypedDict):
    name: str
    arguments: str  # JSON text


class ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: Function


class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[ContentPart]


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: str | None
    tool_calls: NotRequired[list[ToolCall]]


class ToolMessage(TypedDict):
    role: Literal["tool"]
    tool_call_id: str
    content: str


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage


class FunctionSpec(TypedDict):
    name: str
    description: str
    parameters: JsonObject


class Tool(TypedDict):
    type: Literal["function"]
    function: FunctionSpec


class StreamOptions(TypedDict):
    include_usage: bool


class OllamaOptions(TypedDict):
    num_ctx: object  # the configured context window, or the option `num_ctx` as written


class Body(TypedDict, total=False):
    model: str
    messages: list[Message]
    stream: bool
    stream_options: StreamOptions
    max_tokens: int
    max_completion_tokens: int
    tools: list[Tool]
    reasoning_effort: str
    options: OllamaOptions
