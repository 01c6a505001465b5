"""What the providers share about images in a request: which item images are sent, as what.

An item (a user message, a tool result) refers to its images by `ImageRef` (domain/images.py);
the request carries their base64 data by SHA-256 (`ModelRequest.images`). An image whose data is
there is sent in the provider's own format; one that is not (a model without vision, a missing
file) is sent as a line of text saying so, so the model still learns that an image was there.

Items with images are converted outside `http.WireCache`: their wire form holds the image data,
which is not the item's own. A session's assembled prefix (models/assembly.py) that holds such an
item keeps the data it was assembled with and is assembled again when a request's data differs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from openvaala_server.domain import images as img
from openvaala_server.domain.images import ImageRef
from openvaala_server.domain.records import Item
from openvaala_server.models import http

W = TypeVar("W")

NOT_SHOWN = "not shown: this model does not accept images"


def refs(item: Item) -> list[ImageRef]:
    return img.refs_of(item.get("images"))


def split(item: Item, data: Mapping[str, str]) -> tuple[list[tuple[ImageRef, str]], list[str]]:
    """The item's images that are sent (ref, base64), and the notes for those that are not."""
    sent: list[tuple[ImageRef, str]] = []
    notes: list[str] = []
    for ref in refs(item):
        b64 = data.get(ref["sha256"])
        if b64 is None:
            notes.append(f"{img.placeholder(ref)} ({NOT_SHOWN})")
        else:
            sent.append((ref, b64))
    return sent, notes


def with_notes(text: str, notes: list[str]) -> str:
    if not notes:
        return text
    joined = "\n".join(notes)
    return f"{text.rstrip()}\n{joined}" if text.strip() else joined


def data_url(ref: ImageRef, b64: str) -> str:
    return f"data:{ref['mediaType']};base64,{b64}"


def wires(
    paired: list[Item],
    cache: http.WireCache[W] | None,
    convert: Callable[[Item], W],
    convert_images: Callable[[Item, Mapping[str, str]], W],
    data: Mapping[str, str],
) -> list[W]:
    """Every item's wire form: from the cache, except items with images (built afresh)."""
    out = cache.wire(paired) if cache is not None else [convert(i) for i in paired]
    for index, item in enumerate(paired):
        if item.get("images"):
            out[index] = convert_images(item, data)
    return out
