"""An MCP server's tool as an agent tool: `mcp__SERVER__TOOL` with the server's own schema.

A call's result keeps its text and its images: text blocks become the result's text; each image
keeps its base64 data and MIME type in `McpToolResult.images`, with a placeholder in the text at
its place, so a model without vision still reads that an image came back.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcp.types import Tool as McpToolInfo

from openvaala_server.domain import images
from openvaala_server.domain.images import Image
from openvaala_server.domain.permissions import Access
from openvaala_server.mcp.connection import McpCallError, McpConnection
from openvaala_server.models.base import ToolSpec
from openvaala_server.protocol import codec
from openvaala_server.tools.base import ToolContext, ToolResult, truncate_output

PREFIX = "mcp__"
# A short rendering of the arguments in an approval prompt.
SUMMARY_ARGS = 120
# What every provider accepts as a tool name (OpenAI and Anthropic: ^[a-zA-Z0-9_-]{1,64}$).
MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`mcp__SERVER__TOOL`, made a name providers accept: other characters become `_`, and a
    name past 64 characters is cut and ends with a hash of the whole, so it stays unique."""
    name = f"{PREFIX}{server}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= MAX_NAME and name == f"{PREFIX}{server}__{tool}":
        return name
    digest = hashlib.sha256(tool.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def split_tool_name(name: str) -> tuple[str, str] | None:
    """(server, tool) of an `mcp__SERVER__TOOL` name, or None for any other tool (the tool part
    is as the model sees it: `McpTool.tool` holds the server's own name)."""
    if not name.startswith(PREFIX):
        return None
    server, sep, tool = name[len(PREFIX) :].partition("__")
    return (server, tool) if sep and server and tool else None


@dataclass(frozen=True)
class McpImage:
    """An image a tool returned: base64 `data` as the server sent it, and its MIME type."""

    mime_type: str
    data: str

    def to_dict(self) -> dict[str, str]:
        return {"type": "image", "mimeType": self.mime_type, "data": self.data}


@dataclass(frozen=True)
class McpToolResult(ToolResult):
    images: tuple[McpImage, ...] = ()


class McpTool:
    """One tool of one server; calls go through the server's shared connection."""

    def __init__(self, connection: McpConnection, info: McpToolInfo) -> None:
        self.connection = connection
        self.server = connection.config.name
        self.tool = info.name
        # True: the server is trusted, calls never ask (else at least once per conversation).
        self.trust = connection.config.trust
        schema = info.input_schema or {"type": "object", "properties": {}}
        self._spec = ToolSpec(
            name=tool_name(self.server, info.name),
            description=info.description or f"{info.name} (MCP server {self.server})",
            parameters=dict(schema),
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    def access(self, arguments: dict[str, Any], cwd: Path) -> Access:
        """What the approval prompt shows; an MCP call runs no command and writes no file we see."""
        args = codec.text(arguments, separators=(", ", ": "))
        if len(args) > SUMMARY_ARGS:
            args = args[: SUMMARY_ARGS - 1] + "…"
        inner = args[1:-1] if args.startswith("{") and args.endswith("}") else args
        return Access(summary=f"{self.server}: {self.tool}({inner})", command=None, writes=())

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            # Streamed like a command's output: every client shows it live until the result.
            ctx.emit_output(progress_line(progress, total, message))

        try:
            result = await self.connection.call(
                self.tool, arguments, cwd=ctx.cwd, on_progress=progressed
            )
        except McpCallError as exc:
            return ToolResult(output=str(exc), is_error=True)
        text, images = render_result(result)
        output, truncated = truncate_output(text, ctx.output_limit)
        return McpToolResult(
            output=output,
            is_error=result.is_error,
            truncated=truncated,
            images=images,
            attachments=tuple(filter(None, map(as_attachment, images))),
        )


def progress_line(progress: float, total: float | None, message: str | None) -> str:
    """One progress notification as a line of the call's live output: `[progress 3/10] …`."""
    done = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
    return f"[progress {done}]" + (f" {message}" if message else "") + "\n"


def as_attachment(image: McpImage) -> Image | None:
    """The image as a conversation attachment, or None if it is not one we accept (too big, not
    PNG/JPEG/GIF/WebP by content): its placeholder in the text still says it came back."""
    try:
        what = "an image of the tool's result"
        return images.check(images.decode(image.data, what=what), what=what)
    except images.ImageError:
        return None


def render_result(result: CallToolResult) -> tuple[str, tuple[McpImage, ...]]:
    """The text of a call's result, with a placeholder per image, and the images themselves."""
    parts: list[str] = []
    images: list[McpImage] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent):
            images.append(McpImage(block.mime_type, block.data))
            parts.append(f"[image {len(images)}: {block.mime_type}, {_size(block.data)}]")
        elif isinstance(block, AudioContent):
            parts.append(f"[audio: {block.mime_type}, {_size(block.data)}, not shown]")
        elif isinstance(block, ResourceLink):
            parts.append(f"[resource: {block.uri} (read_mcp_resource reads it)]")
        elif isinstance(block, EmbeddedResource):
            res = block.resource
            if isinstance(res, TextResourceContents):
                parts.append(res.text)
            else:
                parts.append(f"[resource: {res.uri}, {res.mime_type or 'binary'}, not shown]")
    if not parts and result.structured_content is not None:
        parts.append(codec.text(result.structured_content))
    return "\n".join(parts), tuple(images)


def _size(data: str) -> str:
    try:
        return f"{len(base64.b64decode(data, validate=False))} bytes"
    except (binascii.Error, ValueError):
        return "undecodable data"
