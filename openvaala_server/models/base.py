"""The one streaming interface every model provider implements.

The agent loop hands a provider a `ModelRequest` (instructions, the history as items, tool specs)
and iterates the `ModelEvent`s it yields. Providers translate items to their wire format and back;
the loop never sees a provider's JSON. Errors are `ModelError`s with a stable `kind` and a
`retryable` flag, so the retry policy lives in one place (`models/retry.py`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from openvaala_server.config import ModelConfig
from openvaala_server.domain.records import Item
from openvaala_server.protocol.json_types import JsonObject


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: JsonObject  # JSON schema of the arguments object


@dataclass(frozen=True)
class ModelRequest:
    model: ModelConfig
    instructions: str
    items: list[Item]  # the context: summary and recent items, in order
    tools: list[ToolSpec] = field(default_factory=list)
    # Raised by the loop when the last turn of this history was interrupted, so the provider-neutral
    # notice item is already in `items`; kept here for providers that want a system hint instead.
    purpose: str = "turn"  # "turn" | "compaction" | "title"
    # The base64 data of the images the items refer to, by SHA-256 (domain/images.py). Empty for
    # a model without vision: providers then send each image's text placeholder instead.
    images: Mapping[str, str] = field(default_factory=dict)
    # Whose context `items` is (a session), if the next request's will be the same items with more
    # appended: providers keep the wire form of its unchanged beginning for the owner's next call
    # (models/assembly.py), and let it go with the owner. None: assembled whole.
    owner: object | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDone:
    """A finished reasoning block; `provider_data` round-trips opaque state (signatures, ids)."""

    text: str
    provider_data: JsonObject | None = None


@dataclass(frozen=True)
class ToolCallStarted:
    """The model began a tool call (its id and name are known; its arguments are streaming). A
    `ToolCallRequested` with the same id follows when they are complete: the turn keeps the call
    meanwhile so that an interrupt records it rather than dropping it."""

    call_id: str
    name: str


@dataclass(frozen=True)
class ToolCallRequested:
    call_id: str
    name: str
    arguments: JsonObject
    arguments_text: str = ""
    provider_data: JsonObject | None = None


@dataclass(frozen=True)
class UsageReported:
    input_tokens: int
    output_tokens: int
    # What the provider applied for reasoning context (openai_responses), if it said.
    reasoning_context: str | None = None
    cached_input_tokens: int = 0


@dataclass(frozen=True)
class StreamEnded:
    stop_reason: str = "stop"


ModelEvent = (
    TextDelta
    | ReasoningDelta
    | ReasoningDone
    | ToolCallStarted
    | ToolCallRequested
    | UsageReported
    | StreamEnded
)


class ModelError(Exception):
    """A failed model call. `kind` is the stable protocol error kind."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after


class Provider(Protocol):
    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Yield events for one model call; raise `ModelError` on failure.

        Cancelling the iterating task must abort the underlying request at once.
        """
        ...

    def retire(self) -> None:
        """A reload replaced this provider: release its connections once no call uses them."""
        ...

    async def aclose(self) -> None:
        """The daemon is shutting down: release its connections now."""
        ...
