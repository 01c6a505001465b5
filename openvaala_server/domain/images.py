"""Images in a conversation: which kinds are accepted, how one is named, what refers to it.

Pure rules, no I/O (the files are written by store/attachments.py). An image is stored once per
conversation, content-addressed: its name is the SHA-256 of its bytes and the extension of its
kind, `attachments/<sha256>.<ext>` (docs/storage.md). Items refer to images by `ImageRef`.

The kind is read from the bytes' magic numbers, never trusted from a client or a file name: what
a provider is told an image is must be what it is (docs/protocol.md, input/send).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from typing import Final, NotRequired, TypedDict

# The formats every supported provider accepts (OpenAI and Anthropic alike).
EXTENSIONS: Final = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
}
MEDIA_TYPES: Final = tuple(EXTENSIONS)
# Anthropic refuses images over 5 MB; the smallest provider limit is the one we keep.
MAX_IMAGE_BYTES: Final = 5 * 1024 * 1024
MAX_IMAGES_PER_MESSAGE: Final = 4
MAX_NAME_CHARS: Final = 255
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class ImageRef(TypedDict):
    """What an item holds of one image (the bytes are in the conversation's attachments)."""

    sha256: str
    mediaType: str
    size: int
    name: NotRequired[str]  # the file name the user attached, for display only


class ImageError(ValueError):
    """An image that cannot be accepted; the message says which and why."""


@dataclass(frozen=True)
class Image:
    """One image's bytes and what they are."""

    data: bytes
    media_type: str
    name: str | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def ref(self) -> ImageRef:
        ref = ImageRef(sha256=self.sha256, mediaType=self.media_type, size=len(self.data))
        if self.name:
            ref["name"] = self.name
        return ref


def sniff(data: bytes) -> str | None:
    """The media type the bytes' magic numbers name, or None for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def check(data: bytes, *, what: str, declared: str | None = None, name: str | None = None) -> Image:
    """`data` as an accepted image, or `ImageError` naming `what` is wrong with it."""
    if not data:
        raise ImageError(f"{what} is empty")
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageError(
            f"{what} is {len(data)} bytes; images may be at most {MAX_IMAGE_BYTES} bytes (5 MiB)"
        )
    kind = sniff(data)
    if kind is None:
        raise ImageError(f"{what} is not a PNG, JPEG, GIF or WebP image (by its content)")
    if declared is not None and declared != kind:
        raise ImageError(f"{what} is declared {declared} but its content is {kind}")
    return Image(data, kind, name)


def decode(data: str, *, what: str) -> bytes:
    """Strict base64 (a `data:` URL prefix is allowed), or `ImageError`."""
    if data.startswith("data:"):
        _, sep, data = data.partition(",")
        if not sep:
            raise ImageError(f"{what} is a data URL without data")
    if len(data) > (MAX_IMAGE_BYTES * 4) // 3 + 8:
        raise ImageError(f"{what} is larger than {MAX_IMAGE_BYTES} bytes (5 MiB)")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ImageError(f"{what} is not valid base64") from None


def file_name(ref: ImageRef) -> str:
    """The attachment's file name inside `attachments/`."""
    return f"{ref['sha256']}.{EXTENSIONS[ref['mediaType']]}"


def is_sha256(value: object) -> bool:
    return isinstance(value, str) and _SHA256.match(value) is not None


def parse_file_name(name: str) -> tuple[str, str] | None:
    """(sha256, media type) of an attachment file name, or None if it is not one."""
    sha, dot, ext = name.partition(".")
    if not dot or not is_sha256(sha):
        return None
    for media_type, extension in EXTENSIONS.items():
        if extension == ext:
            return sha, media_type
    return None


def refs_of(value: object) -> list[ImageRef]:
    """The well-formed image refs in an item's `images` (anything else is ignored)."""
    if not isinstance(value, list):
        return []
    refs: list[ImageRef] = []
    for entry in value:
        if (
            isinstance(entry, dict)
            and is_sha256(entry.get("sha256"))
            and entry.get("mediaType") in EXTENSIONS
        ):
            refs.append(entry)  # type: ignore[arg-type]
    return refs


def placeholder(ref: ImageRef) -> str:
    """How an image reads as text (to a model without vision, in a transcript without images)."""
    name = ref.get("name")
    label = f"{name}, " if name else ""
    return f"[image: {label}{ref['mediaType']}, {ref['size']} bytes]"


def from_wire(value: object) -> list[Image]:
    """The `images` param of input/send: `[{data, mediaType?, name?}]`, each checked."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ImageError('"images" must be a list of {data, mediaType?, name?} objects')
    if len(value) > MAX_IMAGES_PER_MESSAGE:
        raise ImageError(
            f"{len(value)} images; a message may carry at most {MAX_IMAGES_PER_MESSAGE}"
        )
    out: list[Image] = []
    for index, entry in enumerate(value):
        what = f"image {index + 1}"
        if not isinstance(entry, dict):
            raise ImageError(f"{what} must be an object {{data, mediaType?, name?}}")
        unknown = sorted(set(entry) - {"data", "mediaType", "name"})
        if unknown:
            raise ImageError(f"{what} has unknown key {unknown[0]!r} (data, mediaType, name)")
        data, declared, name = entry.get("data"), entry.get("mediaType"), entry.get("name")
        if not isinstance(data, str):
            raise ImageError(f'{what}: "data" must be a base64 string')
        if declared is not None and declared not in EXTENSIONS:
            raise ImageError(
                f"{what}: mediaType {str(declared)[:80]!r} is not one of {', '.join(MEDIA_TYPES)}"
            )
        if name is not None and (not isinstance(name, str) or len(name) > MAX_NAME_CHARS):
            raise ImageError(f'{what}: "name" must be a string of at most {MAX_NAME_CHARS}')
        if isinstance(name, str):
            what = f"{what} ({name})"
        out.append(check(decode(data, what=what), what=what, declared=declared, name=name))
    return out
