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
# The shape of the classes it was written from, and of the file (the turns in a part of their
# own, "turns apart"): another shape is stale, never misread.
_SHAPE: Final = [list(names) for names in (_CONVERSATION, _SESSION, _TURN, _GRANT, ("apart",))]


def folded_path(metadata: Path) -> Path:
    return metadata.with_name(FOLDED_FILE)


def load(metadata: Path) -> m.ConversationMeta:
    """The conversation folded from `metadata` (a metadata.jsonl): from its snapshot and the
    records after it when the snapshot matches, else from the whole file. Raises OSError,
    `FormatTooNew` or `CorruptConversation` as `reindex.read_meta` does."""
    return load_with_seq(metadata)[0]


def load_with_seq(metadata: Path) -> tuple[m.ConversationMeta, int]:
    """`load`, and the seq of the last record folded (0: none): the store's metadata cache
    follows appends from there (store/store.py, `_apply`)."""
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
    return meta, read.last_seq if read.records else _seq_before(data, start)


def _seq_before(data: bytes, end: int) -> int:
    """The seq of the last record that ends at `end` (a snapshot's length: a line's end)."""
    if end <= 0:
        return 0
    line = journal.parse_line(data[data.rfind(b"\n", 0, end - 1) + 1 : end - 1])
    return 0 if isinstance(line, str) else int(line["seq"])


def write(metadata: Path, meta: m.ConversationMeta, length: int, crc: int) -> None:
    """Keep `meta`, folded from the first `length` bytes of `metadata` (CRC-32 `crc`)."""
    head, turns = _encode(meta)
    body = codec.dumps(head) + b"\n" + codec.dumps(turns)
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
        apart = bytes(body).find(b"\n")
        if apart < 0:
            return None
        return _decode(codec.parse(body[:apart]), bytes(body[apart + 1 :])), length
    except (codec.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


def _encode(meta: m.ConversationMeta) -> tuple[dict[str, Any], list[list[Any]]]:
    """The conversation without its turns, then every turn. Rows rather than objects for the
    many turns: a list per turn decodes several times faster than a dict of named fields. The
    turns an open asks for (`_eager`) are in the first part too: the second is decoded only
    when anything else is asked (`m.Turns`)."""
    encoded = {name: getattr(meta, name) for name in _CONVERSATION}
    encoded["sessions"] = [[getattr(s, n) for n in _SESSION] for s in meta.sessions.values()]
    encoded["grants"] = [[getattr(g, n) for n in _GRANT] for g in meta.grants]
    eager = _eager(meta)
    encoded["known"] = [[getattr(t, n) for n in _TURN] for t in eager]
    encoded["count"] = len(meta.turns)
    return encoded, [[getattr(t, n) for n in _TURN] for t in meta.turns.values()]


def _eager(meta: m.ConversationMeta) -> list[m.TurnMeta]:
    """Every running turn, each session's last turn and the very last, in their order."""
    wanted = {s.last_turn_id for s in meta.sessions.values() if s.last_turn_id}
    last = meta.last_turn
    if last is not None:
        wanted.add(last.turn_id)
    return [t for t in meta.turns.values() if t.turn_id in wanted or t.status == "running"]


def _decode(encoded: dict[str, Any], turns: bytes) -> m.ConversationMeta:
    fields = {name: encoded[name] for name in _CONVERSATION}
    sessions = [m.SessionMeta(*row) for row in encoded["sessions"]]

    def rest() -> list[m.TurnMeta]:
        return [m.TurnMeta(*row) for row in codec.parse(turns)]

    count = encoded["count"]
    if not isinstance(count, int):
        raise ValueError("the turns' count is not a number")
    return m.ConversationMeta(
        **fields,
        sessions={s.session_id: s for s in sessions},
        turns=m.Turns((m.TurnMeta(*row) for row in encoded["known"]), rest, count),
        grants=[Grant(*row) for row in encoded["grants"]],
    )
