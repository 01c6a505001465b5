"""Images in the terminal UI: `/image PATH`, image paths pasted or typed into a message, and how a
message's images read in the transcript. No Textual here.

A terminal cannot paste an image itself; what it pastes (or what a file manager drops) is the
image's path. So a message is searched for path-like words (`/…`, `~/…`, `./…`, `../…`,
`file://…`, quoted or with `\\ ` escapes) that name an image file: those images go with the
message and the text stays as typed. A message that is nothing but image paths sends nothing:
the images wait for the next message, as `/image PATH` does. The kind is read from the bytes
(domain/images.py); the daemon checks again.
"""

from __future__ import annotations

import base64
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from openvaala_server.domain import images as img
from openvaala_server.domain.images import Image

if TYPE_CHECKING:
    from openvaala_server.protocol.json_types import JsonObject

_PATH_STARTS = ("/", "~/", "./", "../", "file://")


@dataclass
class Loaded:
    images: list[Image] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def resolve(typed: str, cwd: str) -> str:
    """The absolute path `typed` names (a `file://` URI, `~`, relative to `cwd`)."""
    if typed.startswith("file://"):
        typed = unquote(urlsplit(typed).path)
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(typed)))


def load(typed: str, cwd: str) -> Image:
    """The image at `typed`, or `img.ImageError` saying why not."""
    path = resolve(typed, cwd)
    try:
        with open(path, "rb") as file:
            data = file.read(img.MAX_IMAGE_BYTES + 1)
    except OSError as exc:
        raise img.ImageError(f"{typed} could not be read ({exc.strerror or exc})") from None
    return img.check(data, what=typed, name=os.path.basename(path))


def words(text: str) -> list[str]:
    try:
        return shlex.split(text, posix=True)
    except ValueError:  # an unbalanced quote: plain words
        return text.split()


def _is_image_file(path: str) -> bool:
    try:
        with open(path, "rb") as file:
            return img.sniff(file.read(16)) is not None
    except OSError:
        return False


def image_paths(text: str, cwd: str) -> list[str]:
    """The words of `text` that are paths of image files (by content), in order, once each."""
    found: list[str] = []
    for word in words(text):
        is_path = word.startswith(_PATH_STARTS) and word not in found
        if is_path and _is_image_file(resolve(word, cwd)):
            found.append(word)
    return found


def only_paths(text: str, paths: list[str]) -> bool:
    """Is `text` nothing but these paths (a paste of one or more image paths)?"""
    return bool(paths) and all(word in paths for word in words(text))


def load_all(paths: list[str], cwd: str) -> Loaded:
    out = Loaded()
    for typed in paths:
        try:
            out.images.append(load(typed, cwd))
        except img.ImageError as exc:
            out.problems.append(f"{exc}: not attached")
    return out


def to_param(image: Image) -> JsonObject:
    """One entry of input/send's `images`."""
    param: JsonObject = {
        "data": base64.b64encode(image.data).decode("ascii"),
        "mediaType": image.media_type,
    }
    if image.name:
        param["name"] = image.name
    return param


def describe(image: Image) -> str:
    return img.placeholder(image.ref())


def transcript_lines(item: Mapping[str, object]) -> list[str]:
    """How an item's images read in the transcript: one placeholder line each."""
    return [f"🖼 {img.placeholder(ref)}" for ref in img.refs_of(item.get("images"))]


@dataclass
class PendingImages:
    """Images attached with `/image` or a pasted path, waiting for the next message."""

    waiting: list[Image] = field(default_factory=list)

    def add(self, images: list[Image]) -> list[str]:
        """Add; the problems (too many) to tell the user."""
        problems: list[str] = []
        for image in images:
            if any(w.sha256 == image.sha256 for w in self.waiting):
                continue
            if len(self.waiting) >= img.MAX_IMAGES_PER_MESSAGE:
                problems.append(
                    f"at most {img.MAX_IMAGES_PER_MESSAGE} images per message: "
                    f"{image.name or 'an image'} not attached"
                )
                continue
            self.waiting.append(image)
        return problems

    def take(self) -> list[Image]:
        taken, self.waiting = self.waiting, []
        return taken
