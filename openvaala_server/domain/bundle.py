"""Conversation bundles (`openvaala export` / `import`): the manifest and the rules a bundle obeys.

Pure. A bundle is an uncompressed tar archive:

    manifest.json                        the Manifest below, first
    conversations/<id>/<path>            each conversation's directory, files only

It holds the exported conversation and every conversation it was forked or rewound from
(`forkedFrom`, `olderHistory`), so older history and the tree come along. docs/storage.md,
"Export and import", is the user's description.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, NotRequired, TypedDict

from openvaala_server.domain.ids import is_valid_id
from openvaala_server.domain.images import parse_file_name

FORMAT: Final = "openvaala-bundle"
VERSION: Final = 2
# The checksum a file entry carries, by format version, and its length in hex digits. Format 1
# gave SHA-256; format 2 gives CRC-32 (zlib's, as zip and gzip): the checksum only detects
# damage, since the manifest is not signed (whoever could change a member could change its
# checksum too), and CRC-32 costs a quarter of SHA-256, which bounded export (docs/design.md).
CHECKSUMS: Final = {1: ("sha256", 64), 2: ("crc32", 8)}
MANIFEST: Final = "manifest.json"
PREFIX: Final = "conversations/"
MAX_MANIFEST_BYTES: Final = 16 * 1024 * 1024
MAX_MEMBER_BYTES: Final = 1024 * 1024 * 1024  # one file
MAX_TOTAL_BYTES: Final = 8 * 1024 * 1024 * 1024
MAX_MEMBERS: Final = 200_000
MAX_DEPTH: Final = 16  # path components under a conversation directory
ON_CONFLICT: Final = ("ask", "keep-both", "skip")


class BundleError(ValueError):
    """Why a bundle is refused, for a person to read."""


class FileEntry(TypedDict):
    path: str  # relative to the conversation's directory
    size: int
    crc32: NotRequired[str]  # format 2: 8 lowercase hex digits
    sha256: NotRequired[str]  # format 1: 64 lowercase hex digits


class ConversationEntry(TypedDict):
    conversationId: str
    title: str
    role: str  # "exported" | "ancestor"
    files: list[FileEntry]


class Manifest(TypedDict):
    format: str
    version: int
    conversationId: str
    exportedAt: str
    conversations: list[ConversationEntry]


def excluded(rel: str) -> bool:
    """Files of a conversation directory a bundle leaves out: everything but `kept` ones (locks,
    temporary files, the snapshot store's stat cache and its git files, which describe this
    machine or would be honoured by git)."""
    return not kept(rel)


# What OpenVaala itself writes in a conversation directory, and all an import keeps: the
# journals (and a torn tail moved aside), the images, and the snapshot store's loose objects.
# Anything else would be a file git, or some later version, honours without having written it:
# a bundle's `checkpoints/config` could name a filter or an fsmonitor command that the next
# snapshot runs (docs/security.md, "Bundles").
_JOURNAL: Final = re.compile(r"(metadata|checkpoints|[0-9a-f]{32})\.jsonl(\.torn-[0-9]{1,9})?")
_OBJECT: Final = re.compile(r"checkpoints/objects/[0-9a-f]{2}/[0-9a-f]{38}")
# The snapshot store's own git files, written by bundles of earlier versions: skipped at
# import (the store writes its own), never refused.
GIT_FILES: Final = "checkpoints/"


def kept(rel: str) -> bool:
    """Whether `rel` (relative to a conversation directory) is a file OpenVaala writes there."""
    if _JOURNAL.fullmatch(rel) or _OBJECT.fullmatch(rel):
        return True
    folder, _, name = rel.partition("/")
    return folder == "attachments" and parse_file_name(name) is not None


def safe_relpath(rel: str) -> bool:
    if not rel or "\0" in rel or "\\" in rel or rel.startswith("/"):
        return False
    parts = rel.split("/")
    return len(parts) <= MAX_DEPTH and all(p not in ("", ".", "..") for p in parts)


def split_member(name: str) -> tuple[str, str]:
    """(conversation id, path inside its directory) of a member name; BundleError if it is not
    one a bundle may hold (absolute, `..`, another top directory, an invalid id)."""
    if not name.startswith(PREFIX):
        raise BundleError(f"member {name[:200]!r} is outside conversations/")
    cid, _, rel = name[len(PREFIX) :].partition("/")
    if not is_valid_id(cid):
        raise BundleError(f"member {name[:200]!r}: {cid[:60]!r} is not a conversation id")
    if not safe_relpath(rel):
        raise BundleError(f"member {name[:200]!r} has an unsafe path")
    return cid, rel


def parse_manifest(value: object) -> Manifest:
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise BundleError("not an OpenVaala bundle: manifest.json has no format 'openvaala-bundle'")
    key, length = CHECKSUMS[_version(value.get("version"))]
    main = value.get("conversationId")
    entries = value.get("conversations")
    if not is_valid_id(main) or not isinstance(entries, list) or not entries:
        raise BundleError("manifest.json: conversationId or conversations is missing")
    seen: set[str] = set()
    for entry in entries:
        cid = _entry_id(entry, seen)
        files = entry.get("files")
        if not isinstance(files, list):
            raise BundleError(f"manifest.json: conversation {cid} has no file list")
        if not all(_file_ok(f, key, length) for f in files):
            raise BundleError(f"manifest.json: a file entry of {cid} is malformed")
    if main not in seen:
        raise BundleError("manifest.json: the exported conversation is not in the bundle")
    return value  # type: ignore[return-value]


def _version(version: object) -> int:
    """The manifest's bundle format, one this version reads."""
    if not isinstance(version, int) or isinstance(version, bool):  # True is an int in Python
        raise BundleError("manifest.json: version is not a number")
    if version > VERSION:
        raise BundleError(
            f"this bundle was made by a newer OpenVaala (bundle format {version}; this version "
            f"reads format {VERSION}): upgrade OpenVaala to import it"
        )
    if version not in CHECKSUMS:
        raise BundleError(f"manifest.json: there is no bundle format {version}")
    return version


def _entry_id(entry: object, seen: set[str]) -> str:
    """The id of a conversation entry, listed once (added to `seen`)."""
    if not isinstance(entry, dict) or not is_valid_id(entry.get("conversationId")):
        raise BundleError("manifest.json: a conversation entry has no valid id")
    cid = str(entry["conversationId"])
    if cid in seen:
        raise BundleError(f"manifest.json: conversation {cid} is listed twice")
    seen.add(cid)
    return cid


def _file_ok(f: object, key: str, length: int) -> bool:
    return (
        isinstance(f, dict)
        and isinstance(f.get("path"), str)
        and safe_relpath(f["path"])
        and isinstance(f.get("size"), int)
        and 0 <= f["size"] <= MAX_MEMBER_BYTES
        and isinstance(f.get(key), str)
        and len(f[key]) == length
    )


def checksum(entry: FileEntry) -> tuple[str, str]:
    """(kind, hex digits) of a file entry's checksum, as `parse_manifest` accepted it."""
    if "crc32" in entry:
        return "crc32", entry["crc32"]
    return "sha256", entry["sha256"]


def ancestors_of(created: Mapping[str, object]) -> list[str]:
    """The conversations a `conversation_created` record refers to: the one it was forked or
    rewound from, and the one holding its older history."""
    forked = created.get("forkedFrom")
    if not isinstance(forked, dict):
        return []
    found = [forked.get("conversationId")]
    older = forked.get("olderHistory")
    if isinstance(older, dict):
        found.append(older.get("conversationId"))
    return [c for c in dict.fromkeys(found) if isinstance(c, str) and is_valid_id(c)]


def remap_created(created: dict[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    """The creation record with conversation ids replaced by `ids` (an import keeping both)."""
    out = dict(created)
    cid = out.get("conversationId")
    out["conversationId"] = ids.get(cid, cid) if isinstance(cid, str) else cid
    forked = out.get("forkedFrom")
    if isinstance(forked, dict):
        forked = dict(forked)
        parent = forked.get("conversationId")
        if isinstance(parent, str):
            forked["conversationId"] = ids.get(parent, parent)
        older = forked.get("olderHistory")
        if isinstance(older, dict):
            older = dict(older)
            source = older.get("conversationId")
            if isinstance(source, str):
                older["conversationId"] = ids.get(source, source)
            forked["olderHistory"] = older
        out["forkedFrom"] = forked
    return out
