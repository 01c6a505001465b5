"""What an MCP server offers besides tools: its resources and prompts, listed at start, and how
a read resource or a filled-in prompt becomes text (docs/configuration.md, "MCP servers")."""

from __future__ import annotations

import base64
import binascii

from mcp.client.session import ClientSession
from mcp.types import (
    BlobResourceContents,
    EmbeddedResource,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    PaginatedRequestParams,
    Prompt,
    ReadResourceResult,
    Resource,
    TextContent,
    TextResourceContents,
)


async def list_resources(session: ClientSession) -> list[Resource]:
    found: list[Resource] = []
    cursor: str | None = None
    while True:
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page: ListResourcesResult = await session.list_resources(params=params)
        found.extend(page.resources)
        cursor = page.next_cursor
        if not cursor:
            return found


async def list_prompts(session: ClientSession) -> list[Prompt]:
    found: list[Prompt] = []
    cursor: str | None = None
    while True:
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page: ListPromptsResult = await session.list_prompts(params=params)
        found.extend(page.prompts)
        cursor = page.next_cursor
        if not cursor:
            return found


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
