"""A `session/prompt`'s content blocks as one OpenVaala input: text, plus images.

Embedded context (a file the user @-mentioned, sent with its text) goes into the message as a
fenced block naming its URI, the way the model reads any pasted file; a resource link (a mention
without its text) stays a link the model can read with its own tools. Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict
from urllib.parse import unquote, urlparse

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

Block = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


class Image(TypedDict, total=False):
    """An image as `input/send` takes it (docs/protocol.md, "Images")."""

    data: str  # standard base64
    mediaType: str
    name: str


@dataclass
class PromptInput:
    text: str = ""
    images: list[Image] = field(default_factory=list)


class UnsupportedContent(ValueError):
    """A block this agent did not advertise (audio)."""


def _shown(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def from_blocks(blocks: list[Block]) -> PromptInput:
    parts: list[str] = []
    result = PromptInput()
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ImageContentBlock):
            image: Image = {"data": block.data, "mediaType": block.mime_type}
            if block.uri:
                image["name"] = _shown(block.uri).rsplit("/", 1)[-1][:255]
            result.images.append(image)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[{block.name}]({_shown(block.uri)})")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(
                    f"\n<context file={_shown(resource.uri)!r}>\n{resource.text}\n</context>\n"
                )
            elif isinstance(resource, BlobResourceContents):
                mime = resource.mime_type or ""
                if mime.startswith("image/"):
                    name = _shown(resource.uri).rsplit("/", 1)[-1][:255]
                    result.images.append({"data": resource.blob, "mediaType": mime, "name": name})
                else:
                    parts.append(f"[{_shown(resource.uri)} ({mime or 'binary'}, not included)]")
        else:
            raise UnsupportedContent("audio prompts are not supported by OpenVaala")
    # Editors split a message around its mentions into several blocks that carry their own
    # spaces: joined as they are, they read as the user wrote them.
    result.text = "".join(parts).strip()
    return result
