"""Images in the bridge's `openvaala/send` and `openvaala/prompt`: `images` is a list of image
URIs (`file://…`, or absolute paths), read here, or of `{"data": base64, "name"?}` objects (an
image pasted into the VS Code chat panel, which has no file), sent as `input/send` `images`
(docs/editors.md). An entry that is not a readable PNG, JPEG, GIF or WebP image of at most 5 MiB
is an invalid-params error naming it, before anything is sent."""

from __future__ import annotations

from pygls.exceptions import JsonRpcInvalidParams

from openvaala_server.client import images as client_images
from openvaala_server.domain import images as img
from openvaala_server.domain.images import MAX_IMAGES_PER_MESSAGE
from openvaala_server.protocol.json_types import JsonObject


def image_params(value: object) -> list[JsonObject]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str | dict) for v in value):
        raise JsonRpcInvalidParams(
            "'images' must be a list of file:// URIs of images or {data, name} objects",
            data={"param": "images"},
        )
    if len(value) > MAX_IMAGES_PER_MESSAGE:
        raise JsonRpcInvalidParams(
            f"{len(value)} images; a message may carry at most {MAX_IMAGES_PER_MESSAGE}",
            data={"param": "images"},
        )
    try:
        return [_one(v) for v in value]
    except client_images.ImageError as exc:
        raise JsonRpcInvalidParams(str(exc), data={"param": "images"}) from None


def _one(entry: object) -> JsonObject:
    if isinstance(entry, str):
        return client_images.from_uri(entry)
    if not isinstance(entry, dict):
        raise client_images.ImageError("an image is a file:// URI or a {data, name} object")
    name = entry.get("name")
    name = name[: img.MAX_NAME_CHARS] if isinstance(name, str) and name else None
    data = entry.get("data")
    what = name or "an image"
    if not isinstance(data, str):
        raise client_images.ImageError(f"{what}: 'data' must be a base64 string")
    # Bounded before decoding: the size is checked on the text, not on what it decodes to.
    return client_images.from_bytes(img.decode(data, what=what), name)
