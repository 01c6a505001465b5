"""A conversation's images on disk: `<conversation dir>/attachments/<sha256>.<ext>`.

Content-addressed (domain/images.py): the same image attached twice is one file, and a file, once
there, never changes. Each is written to a temporary name, fsynced, renamed into place and its
directory fsynced before the item that refers to it is appended (docs/storage.md), so no journal
ever names an image that is not on disk. They live inside the conversation's directory, so moving
or copying that directory takes them along; reindex reads only the journals and ignores them.

Blocking calls: run them in a thread.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Final

from openvaala_server.domain import images
from openvaala_server.domain.images import Image, ImageRef

DIRECTORY: Final = "attachments"


def directory(conversation_dir: Path) -> Path:
    return conversation_dir / DIRECTORY


def path_of(conversation_dir: Path, ref: ImageRef) -> Path:
    return directory(conversation_dir) / images.file_name(ref)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def store(conversation_dir: Path, image: Image) -> ImageRef:
    """Write `image` (if it is not there yet) durably; its ref for an item."""
    ref = image.ref()
    target = path_of(conversation_dir, ref)
    if target.is_file() and target.stat().st_size == len(image.data):
        return ref
    folder = directory(conversation_dir)
    if not folder.is_dir():
        folder.mkdir(mode=0o700, exist_ok=True)
        _fsync_dir(conversation_dir)
    temporary = folder / f".tmp-{secrets.token_hex(8)}"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            view = memoryview(image.data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    _fsync_dir(folder)
    return ref


def load(conversation_dir: Path, ref: ImageRef) -> bytes | None:
    """The image's bytes, or None when the file is missing or not what the ref names."""
    path = path_of(conversation_dir, ref)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        data = file.read(images.MAX_IMAGE_BYTES + 1)
    if len(data) > images.MAX_IMAGE_BYTES or images.sniff(data) != ref["mediaType"]:
        return None
    return data
