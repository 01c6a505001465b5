"""The Anthropic Messages request, as declared types (what `anthropic.py` builds and sends)."""

from __future__ import annotations

from typing import Literal, TypedDict

from openvaala_server.protocol.json_types import JsonObject

Role = Literal["user", "assistant"]


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str


class ImageSource(TypedDict):
    type: Literal["base64"]
    media_type: str
    data: str


class ImageBlock(TypedDict):
    type: Literal["image"]
    source: ImageSource


class ThinkingBlock(TypedDict):
    type: Literal["thinking"]
    thinking: str
    signature: str


class RedactedThinkingBlock(TypedDict):
    type: Literal["redacted_thinking"]
    data: str


class ToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: JsonObject


class ToolResultBlock(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    # Text alone, or text and images (a tool that returned images).
    content: str | list[TextBlock | ImageBlock]
    is_error: bool


Block = (
    TextBlock | ImageBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ToolResultBlock
)


class Message(TypedDict):
    role: Role
    content: list[Block]


class Tool(TypedDict):
    name: str
    description: str
    input_schema: JsonObject


class Thinking(TypedDict):
    type: Literal["enabled"]
    budget_tokens: int


class Body(TypedDict, total=False):
    model: str
    max_tokens: int
    messages: list[Message]
    stream: bool
    system: str
    tools: list[Tool]
    thinking: Thinking
