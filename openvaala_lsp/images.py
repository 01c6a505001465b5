"""Images in the bridge's `openvaala/send` and `openvaala/prompt`: `images` is a list of image
URIs (`file://…`, or absolute paths), read here and sent as `input/send` `images`
(docs/editors.md). A URI that is not a readable PNG, JPEG, GIF or WebP file of at most 5 MiB is
an invalid-params error naming it, before anything is sent."""

from __future__ import annotations

from pygls.exceptions import JsonRpcInvalidParams

from openvaala_server.client import images as client_images
from openvaala_server.domain.images import MAX_IMAGES_PER_MESSAGE
from openvaala_server.protocol.json_types import JsonObject


def image_params(value: object) -> list[JsonObject]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise JsonRpcInvalidParams(
            "'images' must be a list of file:// URIs of images", data={"param": "images"}
        )
    if len(value) > MAX_IMAGES_PER_MESSAGE:
        raise JsonRpcInvalidParams(
            f"{len(value)} images; a message may carry at most {MAX_IMAGES_PER_MESSAGE}",
            data={"param": "images"},
        )
    try:
        return [client_images.from_uri(uri) for uri in value]
    except client_images.ImageError as exc:
        raise JsonRpcInvalidParams(str(exc), data={"param": "images"}) from None
