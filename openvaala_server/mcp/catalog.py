"""What an MCP server offers besides tools: its resources and prompts, listed at start, and how
a read resource or a filled-in prompt becomes text (docs/configuration.md, "MCP servers")."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

from mcp.client.session import ClientSession
from mcp.types import (
    BlobResourceContents,
    EmbeddedResource,
    GetPromptResult,
    PaginatedRequestParams,
    Prompt,
    ReadResourceResult,
    Resource,
    TextContent,
    TextResourceContents,
    Tool,
)


class _Page(Protocol):
    @property
    def next_cursor(self) -> str | None: ...


P = TypeVar("P", bound=_Page)
T = TypeVar("T")


async def every(
    fetch: Callable[[PaginatedRequestParams | None], Awaitable[P]],
    items: Callable[[P], Sequence[T]],
) -> list[T]:
    """Every item of a paginated listing, page after page."""
    found: list[T] = []
    cursor: str | None = None
    while True:
        page = await fetch(PaginatedRequestParams(cursor=cursor) if cursor else None)
        found.extend(items(page))
        cursor = page.next_cursor
        if not cursor:
            return found


async def list_tools(session: ClientSession) -> list[Tool]:
    return await every(lambda p: session.list_tools(params=p), lambda page: page.tools)


async def list_resources(session: ClientSession) -> list[Resource]:
    return await every(lambda p: session.list_resources(params=p), lambda page: page.resources)


async def list_prompts(session: ClientSession) -> list[Prompt]:
    return await every(lambda p: session.list_prompts(params=p), lambda page: page.prompts)


def resource_text(result: ReadResourceResult) -> str:
    """A read resource's text; a binary part is named, not shown."""
    parts: list[str] = []
    for content in result.contents:
        if isinstance(content, TextResourceContents):
            parts.append(content.text)
        elif isinstance(content, BlobResourceContents):
            kind = content.mime_type or "binary"
            parts.append(f"[{content.uri}: {kind}, {_size(content.blob)}, not shown]")
    return "\n".join(parts)


def prompt_text(result: GetPromptResult) -> str:
    """A filled-in prompt as one message: its messages' text (an embedded text resource too),
    in order."""
    parts: list[str] = []
    for message in result.messages:
        content = message.content
        if isinstance(content, TextContent):
            parts.append(content.text)
        elif isinstance(content, EmbeddedResource) and isinstance(
            content.resource, TextResourceContents
        ):
            parts.append(content.resource.text)
    return "\n\n".join(parts)


def _size(data: str) -> str:
    try:
        return f"{len(base64.b64decode(data, validate=False))} bytes"
    except (binascii.Error, ValueError):
        return "undecodable data"
