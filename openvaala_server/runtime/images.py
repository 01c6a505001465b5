"""Images between the protocol, the conversation's attachments and the model requests.

- At send time: a model without `vision` refuses images before anything is stored or sent
  (docs/protocol.md, input/send); accepted images are written to the conversation's attachments
  (store/attachments.py) before the input that refers to them can become an item.
- At each model call: the images the context refers to are read (once per conversation, kept
  while they stay in context) and handed to the provider as base64; a model without vision gets
  none, so providers send each image's text placeholder instead.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from openvaala_server import errors
from openvaala_server.config import ModelConfig
from openvaala_server.domain import images as img
from openvaala_server.domain.images import Image, ImageRef
from openvaala_server.domain.records import Item
from openvaala_server.models.base import ModelRequest
from openvaala_server.store import attachments

if TYPE_CHECKING:
    from openvaala_server.runtime.conversation import LiveConversation
    from openvaala_server.runtime.ports import Storage

# Base64 of the images in each loaded conversation's context, by SHA-256.
_loaded: weakref.WeakKeyDictionary[LiveConversation, dict[str, str]] = weakref.WeakKeyDictionary()


def require_vision(model: ModelConfig, count: int) -> None:
    if count and not model.vision:
        raise errors.InvalidParams(
            f"model {model.name!r} does not accept images (its config has no `vision = true`); "
            "send the message without images, or choose a model with vision "
            "(conversation/setModel)",
            param="images",
            model=model.name,
        )


def parse(value: object) -> list[Image]:
    try:
        return img.from_wire(value)
    except img.ImageError as exc:
        raise errors.InvalidParams(str(exc), param="images") from None


def conversation_dir(runtime: Storage, cid: str) -> Path:
    return runtime.store.data_dir.conversation_dir(cid)


async def store(runtime: Storage, cid: str, images: Iterable[Image]) -> list[ImageRef]:
    """Write the images into the conversation's attachments, durably; their refs."""
    folder = conversation_dir(runtime, cid)
    wanted = list(images)
    if not wanted:
        return []

    def write() -> list[ImageRef]:
        return [attachments.store(folder, image) for image in wanted]

    return await runtime.store_call(asyncio.to_thread(write))


async def copy(runtime: Storage, source: str, target: str, items: Iterable[Item]) -> None:
    """Copy the images `items` refer to from conversation `source` to `target` (a fork), before
    the items are written there. One missing in the source stays missing (its placeholder)."""
    wanted = list(refs_in(items).values())
    if not wanted:
        return
    source_dir, target_dir = conversation_dir(runtime, source), conversation_dir(runtime, target)

    def run() -> None:
        for ref in wanted:
            data = attachments.load(source_dir, ref)
            if data is not None:
                attachments.store(target_dir, Image(data, ref["mediaType"]))

    await runtime.store_call(asyncio.to_thread(run))


async def carry_over(
    runtime: Storage, conv: LiveConversation, target: str, message_id: str
) -> list[ImageRef]:
    """The images of message `message_id`, copied into conversation `target` (a rewind: the
    message goes back to the composer with them)."""
    message = next((i for i in conv.root.items if i.get("itemId") == message_id), None)
    if message is None or not message.get("images"):
        return []
    await copy(runtime, conv.conversation_id, target, [message])
    return img.refs_of(message["images"])


def refs_in(items: Iterable[Item]) -> dict[str, ImageRef]:
    found: dict[str, ImageRef] = {}
    for item in items:
        if item.get("images"):
            for ref in img.refs_of(item["images"]):
                found.setdefault(ref["sha256"], ref)
    return found


async def with_images(conv: LiveConversation, request: ModelRequest) -> ModelRequest:
    """`request` with the base64 of the images its items refer to (none without vision)."""
    if not request.model.vision:
        return request
    wanted = refs_in(request.items)
    if not wanted:
        _loaded.pop(conv, None)
        return request
    before = _loaded.get(conv, {})
    data = {sha: before[sha] for sha in wanted if sha in before}
    missing = [ref for sha, ref in wanted.items() if sha not in data]
    if missing:
        folder = conversation_dir(conv.runtime, conv.conversation_id)

        def read() -> dict[str, str]:
            out: dict[str, str] = {}
            for ref in missing:
                raw = attachments.load(folder, ref)
                if raw is not None:  # a lost file reads as its placeholder
                    out[ref["sha256"]] = base64.b64encode(raw).decode("ascii")
            return out

        data.update(await asyncio.to_thread(read))
    _loaded[conv] = data
    return dataclasses.replace(request, images=data)
