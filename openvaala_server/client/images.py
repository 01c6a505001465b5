"""Images for `input/send` from a client's side: a file path, a `file://` URI or bytes become one
entry of `images` (`{data, mediaType, name}`, docs/protocol.md). The kind is read from the bytes
and the limits checked here too, so a client can say what is wrong before anything is sent (the
daemon checks again). Used by the Python client and the editor bridge."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

from openvaala_server.domain import images as img
from openvaala_server.domain.images import ImageError
from openvaala_server.protocol.json_types import JsonObject

__all__ = ["ImageError", "from_bytes", "from_path", "from_uri"]


def from_bytes(data: bytes, name: str | None = None) -> JsonObject:
    image = img.check(data, what=name or "the image", name=name)
    param: JsonObject = {
        "data": base64.b64encode(image.data).decode("ascii"),
        "mediaType": image.media_type,
    }
    if name:
        param["name"] = name[: img.MAX_NAME_CHARS]
    return param


def from_path(path: str | os.PathLike[str]) -> JsonObject:
    """The image file at `path` (absolute, or relative to the current directory)."""
    file = Path(path).expanduser()
    try:
        with file.open("rb") as handle:
            data = handle.read(img.MAX_IMAGE_BYTES + 1)
    except OSError as exc:
        raise ImageError(f"{file} could not be read ({exc.strerror or exc})") from None
    try:
        return from_bytes(data, file.name)
    except ImageError as exc:
        raise ImageError(str(exc).replace(file.name, str(file), 1)) from None


def from_uri(uri: str) -> JsonObject:
    """A `file://` URI, or an absolute path, of an image file."""
    if uri.startswith("file://"):
        parts = urlsplit(uri)
        if parts.netloc not in ("", "localhost"):
            raise ImageError(f"{uri} is on another host: only local files can be attached")
        return from_path(unquote(parts.path))
    if not os.path.isabs(uri):
        raise ImageError(f"{uri[:200]} is neither a file:// URI nor an absolute path")
    return from_path(uri)
