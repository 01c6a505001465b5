"""The folded metadata of a conversation kept beside its journal, so an open need not replay it.

Storage contract (docs/storage.md, "The folded metadata"):

- ``metadata.folded`` holds `ConversationMeta` as folded from the first ``length`` bytes of
  ``metadata.jsonl``, with the CRC-32 of those bytes and of its own body. It is a cache: the
  journal stays the only truth, `reindex` and bundles never read it, and deleting it changes
  nothing but the time of the next open.
- It is used only when the journal still begins with the bytes it was folded from (length and
  checksum): the records after them are folded on top, which gives what a fold of the whole
  file gives (records are lines, and a fold applies them in order). A missing, damaged, stale
  (the journal was rewritten, not appended to) or older-shaped one is passed over and the
  whole file folded.
- It is written (a temporary file renamed over it) by the read that had to fold many records
  past it: the cold open of a long conversation. Journals of a few records are folded as fast
  as a snapshot is read, so they get none.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import zlib
from pathlib import Path
from typing import Any, Final

from openvaala_server.domain import meta as m
from openvaala_server.domain.approvals import Grant
from openvaala_server.protocol import codec
from openvaala_server.store import index as ix
from openvaala_server.store import journal
from openvaala_server.store.reindex import fold_meta

FOLDED_FILE: Final = "metadata.folded"
# Records past the snapshot (or in a journal without one) that make writing it worth while.
REFOLD_RECORDS: Final = 512
_TURN: Final = tuple(f.name for f in dataclasses.fields(m.TurnMeta))
_SESSION: Final = tuple(f.name for f in dataclasses.fields(m.SessionMeta))
_GRANT: Final = tuple(f.name for f in dataclasses.fields(Grant))
_MANY: Final = frozenset({"sessions", "turns", "grants"})
_CONVERSATION: Final = tuple(
    f.name for f in dataclasses.fields(m.ConversationMeta) if f.name not in _MANY
)
# The shape of the classes it was written from: another shape is stale, never misread.
_SHAPE: Final = [list(names) for names in (_CONVERSATION, _SESSION, _TURN, _GRANT)]


def folded_path(metadata: Path) -> Path:
    return metadata.with_name(FOLDED_FILE)


def load(metadata: Path) -> m.ConversationMeta:
    """The conversation folded from `metadata` (a metadata.jsonl): from its snapshot and the
    records after it when the snapshot matches, else from the whole file. Raises OSError,
    `FormatTooNew` or `CorruptConversation` as `reindex.read_meta` does."""
    with open(metadata, "rb") as f:
        data = journal.read_fd(f.fileno())
    view = memoryview(data)
    found = _read(folded_path(metadata), view)
    if found is not None:
        meta, start = found
        read = journal.parse_journal(data[start:])
        for record in read.records:
            ix.apply_record(meta, record)
    else:
        start = 0
        read = journal.parse_journal(data)
        meta = fold_meta(metadata, read)
    if len(read.records) >= REFOLD_RECORDS:
        end = start + read.good_length
        with contextlib.suppress(OSError):  # only a cache: the next open folds again
            write(metadata, meta, end, zlib.crc32(view[:end]))
    return meta


def write(metadata: Path, meta: m.ConversationMeta, length: int, crc: int) -> None:
    """Keep `meta`, folded from the first `length` bytes of `metadata` (CRC-32 `crc`)."""
    body = codec.dumps(_encode(meta))
    header = {"shape": _SHAPE, "length": length, "crc": crc, "body": zlib.crc32(body)}
    target = folded_path(metadata)
    # Per thread: two opens of one conversation (a fork's parent read meanwhile) may both write.
    temporary = target.with_name(f".{FOLDED_FILE}.{os.getpid()}.{threading.get_ident()}")
    # 0600 like every file of the data directory (docs/storage.md, "Layout"): it holds titles.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(codec.dumps(header) + b"\n" + body)
    os.replace(temporary, target)


def _read(path: Path, journal_bytes: memoryview) -> tuple[m.ConversationMeta, int] | None:
    """The snapshot's conversation and the journal offset it reflects, or None if it is missing
    or does not describe the start of `journal_bytes`."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    cut = data.find(b"\n")
    if cut < 0:
        return None
    try:
        header = codec.parse(data[:cut])
        length, crc = header["length"], header["crc"]
        body = memoryview(data)[cut + 1 :]
        if header["shape"] != _SHAPE or zlib.crc32(body) != header["body"]:
            return None
        if not isinstance(length, int) or not 0 < length <= len(journal_bytes):
            return None
        if zlib.crc32(journal_bytes[:length]) != crc:
            return None
        return _decode(codec.parse(body)), length
    except (codec.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


def _encode(meta: m.ConversationMeta) -> dict[str, Any]:
    """Rows rather than objects for the many turns: a list per turn decodes several times
    faster than a dict of named fields."""
    encoded = {name: getattr(meta, name) for name in _CONVERSATION}
    encoded["sessions"] = [[getattr(s, n) for n in _SESSION] for s in meta.sessions.values()]
    encoded["turns"] = [[getattr(t, n) for n in _TURN] for t in meta.turns.values()]
    encoded["grants"] = [[getattr(g, n) for n in _GRANT] for g in meta.grants]
    return encoded


def _decode(encoded: dict[str, Any]) -> m.ConversationMeta:
    fields = {name: encoded[name] for name in _CONVERSATION}
    sessions = [m.SessionMeta(*row) for row in encoded["sessions"]]
    turns = [m.TurnMeta(*row) for row in encoded["turns"]]
    return m.ConversationMeta(
        **fields,
        sessions={s.session_id: s for s in sessions},
        turns={t.turn_id: t for t in turns},
        grants=[Grant(*row) for row in encoded["grants"]],
    )
