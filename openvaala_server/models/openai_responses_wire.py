"""The Responses API request, as declared types (what `openai_responses.py` builds and sends)."""

from __future__ import annotations

from typing import Literal, TypedDict

from openvaala_server.protocol.json_types import JsonObject, JsonValue


class InputText(TypedDict):
    type: Literal["input_text"]
    text: str


class OutputText(TypedDict):
    type: Literal["output_text"]
    text: str


class InputImage(TypedDict):
    type: Literal["input_image"]
    image_url: str  # a data: URL
    detail: Literal["auto"]


class Message(TypedDict):
    type: Literal["message"]
    role: Literal["user", "assistant"]
    content: list[InputText | OutputText | InputImage]


class FunctionCall(TypedDict):
    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str  # JSON text


class FunctionCallOutput(TypedDict):
    type: Literal["function_call_output"]
    call_id: str
    # Text alone, or text and images (a tool that returned images).
    output: str | list[InputText | InputImage]


class Reasoning(TypedDict):
    type: Literal["reasoning"]
    id: str
    summary: list[JsonValue]  # as the provider returned it (opaque, sent back unchanged)
    encrypted_content: str


InputItem = Message | FunctionCall | FunctionCallOutput | Reasoning


class Tool(TypedDict):
    type: Literal["function"]
    name: str
    description: str
    parameters: JsonObject
    strict: bool


class ReasoningOptions(TypedDict, total=False):
    effort: str
    summary: str
    context: str


class Body(TypedDict, total=False):
    model: str
    input: list[InputItem]
    stream: bool
    store: bool
    include: list[str]
    max_output_tokens: int
    instructions: str
    tools: list[Tool]
    reasoning: ReasoningOptions
