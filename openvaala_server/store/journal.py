"""Append-only JSONL journals: durable group-commit appends, tolerant reads, torn-tail repair.

Storage contract:

- One line is one complete record ``{"seq": n, "ts": "...Z", "type": "...", ...payload}``; ``seq``
  counts from 1 per file and continues from the last good record when a file is reopened.
- `JournalWriter.append` returns only once the lines are written **and fsynced** (fdatasync: an
  append changes the size, which fdatasync flushes too). A new file also fsyncs its directory.
- Appends are group-committed: one background thread takes everything pending, writes each file's
  lines with one ``write``, makes the batch durable, then resolves the callers' futures. A batch
  of one file costs one fdatasync; a batch spanning several files on one file system costs one
  ``syncfs`` where that is safe and cheap (see `durability`), else one fdatasync each. The
  event loop never blocks on the disk, and N concurrent writers cost far fewer than N fsyncs.
- A failed write (ENOSPC, EIO…) raises `JournalWriteError` in the callers of that file's batch
  only; the file is truncated back to its previous length, so no partial line stays behind.
- A torn last line (a crash mid-write) is reported by `read_journal`, never fatal. Before the next
  append to the file it is moved to ``<name>.torn-<n>`` and the file is cut back to its last
  complete line: nothing fuses with the new record and nothing is lost.
- A bad line in the middle is reported with its 1-based line number and skipped; it is never
  rewritten. Records of an unknown type are kept (and reported), never dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import BinaryIO, Final, cast

from openvaala_server.domain import records as r
from openvaala_server.errors import StoreError
from openvaala_server.protocol import codec
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.store.durability import GroupSync

KNOWN_TYPES: Final = r.METADATA_RECORD_TYPES | {r.ITEM}
TORN_TAIL: Final = "torn_tail"
BAD_LINE: Final = "bad_line"
UNKNOWN_TYPE: Final = "unknown_type"
_BLOCK: Final = 1 << 16
_SEARCH_BLOCK: Final = 1 << 20  # read per step when searching bytes backwards (`lines_containing`)
_SLICE: Final = 1_000  # lines parsed per C-level pass (see `_parse_clean`)
_SEQ: Final = itemgetter("seq")
_TYPE: Final = itemgetter("type")
_DICT: Final = frozenset({dict})
_INT: Final = frozenset({int, bool})  # what passes `isinstance(seq, int)` from orjson
_STR: Final = frozenset({str})


class JournalWriteError(StoreError):
    """An append did not reach the disk; the file is left as it was before it."""


@dataclass(frozen=True)
class JournalProblem:
    line_no: int  # 1-based
    kind: str  # torn_tail | bad_line | unknown_type
    detail: str


@dataclass
class JournalRead:
    records: list[r.Record] = field(default_factory=list)
    problems: list[JournalProblem] = field(default_factory=list)
    torn_tail: bytes | None = None
    # Bytes up to the end of the last complete line: where the file is cut when the tail is moved.
    good_length: int = 0

    @property
    def last_seq(self) -> int:
        return int(self.records[-1]["seq"]) if self.records else 0


def parse_line(line: bytes) -> r.Record | str:
    """The record on one line, or why it is not one."""
    try:
        value = codec.parse(line)
    except codec.JSONDecodeError as exc:
        return f"not JSON: {exc}"
    if not isinstance(value, dict):
        return "not a JSON object"
    if not isinstance(value.get("seq"), int) or not isinstance(value.get("type"), str):
        return "no integer seq or string type"
    return cast(r.Record, value)  # the folds check each field they use (domain/meta.py)


def parse_journal(data: bytes, known_types: frozenset[str] = KNOWN_TYPES) -> JournalRead:
    lines = data.split(b"\n")
    tail = lines.pop()  # the bytes after the last newline: b"" when the file ends cleanly
    if not tail:
        records = _parse_clean(lines, known_types)
        if records is not None:
            return JournalRead(records=records, good_length=len(data))
    return _parse_lines(lines, tail, len(data), known_types)


def _parse_clean(lines: list[bytes], known_types: frozenset[str]) -> list[r.Record] | None:
    """The records on `lines` if every one is a good record of a known type, else None.

    The common case, in a handful of C-level passes instead of Python work per line: each line is
    still parsed on its own (so a line can never be read as part of its neighbour), and anything
    unusual (a bad line anywhere, an unknown type) sends the whole file to `_parse_lines`, which
    reports it exactly. When this returns records, `_parse_lines` would return the same ones and
    no problem or torn tail.
    """
    try:
        # In slices: between two the interpreter can hand the GIL to the event loop, which one
        # C-level pass over a 50k-line file would hold up for its whole parse.
        values: list[r.Record] = []
        for start in range(0, len(lines), _SLICE):
            values += map(codec.parse, lines[start : start + _SLICE])
        if not _DICT.issuperset(map(type, values)):
            return None
        if not _INT.issuperset(map(type, map(_SEQ, values))):
            return None
        types = list(map(_TYPE, values))
    except (codec.JSONDecodeError, KeyError):
        return None
    if not _STR.issuperset(map(type, types)) or not known_types.issuperset(types):
        return None
    return values


def _parse_lines(
    lines: list[bytes], tail: bytes, size: int, known_types: frozenset[str]
) -> JournalRead:
    """Line by line, with every problem reported (`parse_journal` when the fast path declines)."""
    result = JournalRead(good_length=size - len(tail))
    if tail:
        result.torn_tail = tail
    elif lines and isinstance(parse_line(lines[-1]), str):
        # A complete but unparsable last line is what a crash can leave too: treat it as torn.
        result.torn_tail = lines.pop() + b"\n"
        result.good_length -= len(result.torn_tail)
    _parse_each(lines, 0, known_types, result)
    if result.torn_tail is not None:
        detail = f"{len(result.torn_tail)} bytes without a complete record"
        result.problems.append(JournalProblem(len(lines) + 1, TORN_TAIL, detail))
    return result


def read_journal(path: Path, known_types: frozenset[str] = KNOWN_TYPES) -> JournalRead:
    """Read a whole journal. Raises OSError (e.g. FileNotFoundError) if it cannot be read."""
    with open(path, "rb") as f:
        return parse_journal(f.read(), known_types)


def reverse_lines(f: BinaryIO, end: int) -> Iterator[tuple[int, bytes]]:
    """(start offset, line without newline) of the complete lines before `end`, last first.

    `end` must be 0 or just after a newline. Reads backwards in blocks, so the cost is
    proportional to what the caller consumes, not to the file's size.
    """
    pos = end
    buf = b""  # the file from `pos` on, up to a newline; its first line may start before `pos`
    while True:
        if pos > 0:
            size = min(_BLOCK, pos)
            pos -= size
            f.seek(pos)
            buf = f.read(size) + buf
        stop = len(buf) - 1  # the newline that ends the next line to yield
        while True:
            cut = buf.rfind(b"\n", 0, stop)
            if cut == -1:
                break
            yield pos + cut + 1, buf[cut + 1 : stop]
            stop = cut
        buf = buf[: stop + 1]  # not copied line by line: that made a block cost its size squared
        if pos == 0:
            if buf:
                yield 0, buf[:-1]
            return


def lines_containing(f: BinaryIO, end: int, needle: bytes) -> Iterator[tuple[int, bytes]]:
    """(start offset, line without newline) of the complete lines before `end` whose bytes
    contain `needle` (which holds no newline), last first.

    `end` must be 0 or just after a newline. The bytes are searched a block at a time and only
    the lines that match are split out: finding one record far back costs a read and a byte
    search of what lies after it, not a parse of every line (`reverse_lines`).
    """
    pos = end
    buf = b""  # the file from `pos` on, up to a newline; its first line may start before `pos`
    while True:
        hit = buf.rfind(needle)
        if hit != -1:
            start = buf.rfind(b"\n", 0, hit) + 1
            if start > 0 or pos == 0:  # the whole line is in `buf`
                yield pos + start, buf[start : buf.index(b"\n", hit)]
                buf = buf[:start]
                continue
        elif pos > 0:
            # Nothing here; only the first line, which may go on before `pos`, can still match.
            buf = buf[: buf.find(b"\n") + 1]
        if pos == 0:
            return
        size = min(_SEARCH_BLOCK, pos)
        pos -= size
        f.seek(pos)
        buf = f.read(size) + buf


def line_at(f: BinaryIO, start: int, end: int) -> bytes | None:
    """The complete line that starts at offset `start` (and ends before `end`), without its
    newline; None when no line starts there (a remembered offset of a file that changed)."""
    if not 0 <= start < end:
        return None
    f.seek(max(0, start - 1))
    if start > 0 and f.read(1) != b"\n":
        return None
    chunks: list[bytes] = []
    pos = start
    while pos < end:
        chunk = f.read(min(_BLOCK, end - pos))
        if not chunk:
            return None
        cut = chunk.find(b"\n")
        if cut != -1:
            chunks.append(chunk[:cut])
            return b"".join(chunks)
        chunks.append(chunk)
        pos += len(chunk)
    return None


def _last_line_end(f: BinaryIO, size: int) -> int:
    """The offset just after the last newline of the file (0 if there is none)."""
    pos = size
    while pos > 0:
        start = max(0, pos - _BLOCK)
        f.seek(start)
        cut = f.read(pos - start).rfind(b"\n")
        if cut != -1:
            return start + cut + 1
        pos = start
    return 0


@dataclass
class _End:
    last_seq: int
    good_length: int
    torn_tail: bytes | None


def _scan_end(f: BinaryIO) -> _End:
    """What `parse_journal` would say about the end of the file, reading only the end."""
    size = os.fstat(f.fileno()).st_size
    good = _last_line_end(f, size)
    f.seek(good)
    torn = f.read(size - good) or None
    last_seq = 0
    for start, line in reverse_lines(f, good):
        parsed = parse_line(line)
        if isinstance(parsed, str):
            if torn is None and start + len(line) + 1 == good:
                f.seek(start)
                torn, good = f.read(good - start), start
            continue
        last_seq = int(parsed["seq"])
        break
    return _End(last_seq, good, torn)


def good_end(f: BinaryIO) -> int:
    """Where the complete records of the file end (a torn tail left aside, as the readers do)."""
    return _scan_end(f).good_length


def read_tail(
    path: Path, n: int, known_types: frozenset[str] = KNOWN_TYPES
) -> tuple[list[r.Record], bool]:
    """The last `n` good records (in file order) and whether more records come before them.

    Seeks from the end: opening a conversation with a huge history reads only its last page.
    """
    with open(path, "rb") as f:
        end = _scan_end(f)
        found: list[r.Record] = []
        for _, line in reverse_lines(f, end.good_length):
            parsed = parse_line(line)
            if isinstance(parsed, str):
                continue
            if len(found) == n:
                return found[::-1], True
            found.append(parsed)
        return found[::-1], False


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _move_torn_tail(path: Path, fd: int, good_length: int, tail: bytes) -> Path:
    """Save the torn tail beside the file, durably, and only then cut the file back."""
    n = 1
    while True:
        sidecar = path.with_name(f"{path.name}.torn-{n}")
        try:
            side = os.open(sidecar, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            break
        except FileExistsError:
            n += 1
    try:
        os.write(side, tail)
        os.fsync(side)
    finally:
        os.close(side)
    fsync_dir(path.parent)
    os.ftruncate(fd, good_length)
    os.fsync(fd)
    return sidecar


def repair(path: Path) -> Path | None:
    """Move a torn tail to its sidecar, as the writer does before appending; the sidecar's path."""
    fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        with os.fdopen(os.dup(fd), "rb") as f:
            end = _scan_end(f)
        if end.torn_tail is None:
            return None
        return _move_torn_tail(path, fd, end.good_length, end.torn_tail)
    finally:
        os.close(fd)


def read_fd(fd: int) -> bytes:
    """The whole file behind `fd`, from its start, in as few system calls as it takes: one
    `fstat` and one `read` asking one byte more than its size, which a regular file answers
    short only at its end (a file object adds a second `fstat`, an `lseek` and a last `read`;
    reindex reads every journal once). A file that grew, or a read Linux cuts at ~2 GiB, is read
    on to its end."""
    size = os.fstat(fd).st_size
    first = os.read(fd, size + 1)
    if len(first) == size and size < _MAX_READ:
        return first
    chunks = [first]
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


_MAX_READ: Final = 0x7FFFF000  # Linux returns at most this much from one read


def read_repaired(
    path: Path, known_types: frozenset[str] = KNOWN_TYPES
) -> tuple[JournalRead, Path | None]:
    """`repair(path)` then `read_journal(path)`, reading the file once (for reindex): the read of
    the repaired file and the sidecar written, if any.

    Opens the file as `repair` does (so it fails where `repair` would). A torn tail found by
    `parse_journal` is the one `repair` finds: both take the bytes after the last newline, or else
    a last complete line that `parse_line` rejects.
    """
    fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        data = read_fd(fd)
        read = parse_journal(data, known_types)
        if read.torn_tail is None:
            return read, None
        sidecar = _move_torn_tail(path, fd, read.good_length, read.torn_tail)
        return parse_journal(data[: read.good_length], known_types), sidecar
    finally:
        os.close(fd)


def read_repaired_parts(
    path: Path, part_bytes: int, known_types: frozenset[str] = KNOWN_TYPES
) -> tuple[Iterator[JournalRead], Path | None]:
    """`read_repaired` for a file too big to hold parsed at once: the torn tail moved aside
    first (`repair`, which reads only the end), then the records in parts of about `part_bytes`
    bytes of whole lines, each part parsed as it is read. Problems carry the line number in the
    whole file; the parts together hold what `read_repaired` would return."""
    sidecar = repair(path)
    return _parts(path, part_bytes, known_types), sidecar


def _parts(path: Path, part_bytes: int, known_types: frozenset[str]) -> Iterator[JournalRead]:
    with open(path, "rb") as f:
        rest = b""
        line_no = 0
        while chunk := f.read(part_bytes):
            data = rest + chunk
            cut = data.rfind(b"\n") + 1
            rest = data[cut:]
            if cut:
                yield _parse_part(data[:cut], line_no, known_types)
                line_no += data.count(b"\n", 0, cut)
        if rest:  # no newline at the end after a repair: the file changed meanwhile
            yield _parse_part(rest + b"\n", line_no, known_types)


def _parse_part(data: bytes, before: int, known_types: frozenset[str]) -> JournalRead:
    """Complete lines from the middle of a file: a bad last line is a bad line, not a torn tail
    (the file's own end was repaired before)."""
    lines = data.split(b"\n")
    lines.pop()
    records = _parse_clean(lines, known_types)
    if records is not None:
        return JournalRead(records=records, good_length=len(data))
    result = JournalRead(good_length=len(data))
    _parse_each(lines, before, known_types, result)
    return result


def _parse_each(
    lines: list[bytes], before: int, known_types: frozenset[str], result: JournalRead
) -> None:
    """Each line's record into `result`, each problem with its line number (`before` + its
    1-based place in `lines`)."""
    for index, line in enumerate(lines, start=before + 1):
        parsed = parse_line(line)
        if isinstance(parsed, str):
            result.problems.append(JournalProblem(index, BAD_LINE, parsed))
            continue
        if parsed["type"] not in known_types:
            result.problems.append(JournalProblem(index, UNKNOWN_TYPE, parsed["type"]))
        result.records.append(parsed)


@dataclass
class _OpenFile:
    fd: int
    size: int
    seq: int
    device: int = -1  # st_dev: files of one file system share one syncfs


@dataclass
class _Batch:
    """One file's share of a group commit."""

    path: Path
    ops: list[_Append]
    state: _OpenFile
    results: list[list[r.Record] | BaseException]
    data: bytes
    seq: int  # the file's last seq once `data` is on disk


@dataclass
class _Append:
    path: Path
    payloads: Sequence[JsonMapping]
    future: asyncio.Future[list[r.Record]]
    loop: asyncio.AbstractEventLoop


@dataclass
class _Forget:
    """Close cached files under `directory` (or all, if None), in order with the appends."""

    directory: Path | None
    future: asyncio.Future[list[r.Record]]
    loop: asyncio.AbstractEventLoop


_STOP: Final = object()
_Outcome = tuple[asyncio.Future[list[r.Record]], list[r.Record] | BaseException]


def _settle(outcomes: list[_Outcome]) -> None:
    for future, outcome in outcomes:
        if future.done():  # the awaiting task was cancelled; the write happened regardless
            continue
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


class JournalWriter:
    """The one writer of every journal file of a process (see the module docstring)."""

    def __init__(self, *, max_open_files: int = 256) -> None:
        self._queue: queue.SimpleQueue[list[object]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._stopped: asyncio.Future[None] | None = None
        # Open append fds, least recently used first, so thousands of conversations do not
        # exhaust the fd limit; reopening costs one read of the file's end.
        self._files: OrderedDict[Path, _OpenFile] = OrderedDict()
        self._max_open_files = max_open_files
        self._durable = GroupSync()
        # Operations issued during one event-loop iteration, handed to the thread together at
        # the end of it: writers that resume together (one batch settled wakes them all) then
        # share the next batch instead of the thread taking the first alone and the rest later.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._outbox: list[object] = []
        # Why appends are refused from now on (the data directory was replaced under the
        # daemon: docs/security.md); None while they are not.
        self.halted: str | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._stopped = loop.create_future()
        self._thread = threading.Thread(
            target=self._run, args=(loop, self._stopped), name="journal-writer", daemon=True
        )
        self._thread.start()

    async def close(self) -> None:
        """Finish every pending append, close the files, stop the thread."""
        if self._thread is None or self._closed:
            return
        self._closed = True
        self._submit(_STOP)
        assert self._stopped is not None
        await self._stopped
        self._thread.join()

    async def append(self, path: Path, payloads: Sequence[JsonMapping]) -> list[r.Record]:
        """Append records to `path` (which must exist or whose directory must); return them
        stamped with ``seq`` and ``ts`` once they are fsynced."""
        if self._thread is None or self._closed:
            raise RuntimeError("the journal writer is not running")
        if self.halted is not None:
            raise JournalWriteError(self.halted)
        for payload in payloads:
            if not isinstance(payload.get("type"), str):
                raise ValueError("every record needs a string 'type'")
        if not payloads:
            return []
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[r.Record]] = loop.create_future()
        # Path(path) re-parses even a Path (~15 µs on 3.11): only convert what is not one.
        target = path if isinstance(path, Path) else Path(path)
        self._submit(_Append(target, payloads, future, loop))
        return await future

    async def forget(self, directory: Path | None = None) -> None:
        """Close the cached files under `directory` (all if None) after the pending appends:
        called before a directory is renamed or a file is repaired behind the writer's back."""
        if self._thread is None or self._closed:
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[r.Record]] = loop.create_future()
        self._submit(_Forget(directory, future, loop))
        await future

    def _submit(self, op: object) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is None or running is not self._loop:
            self._queue.put([op])  # another loop or thread: no batching across loops
            return
        if not self._outbox:
            running.call_soon(self._flush)
        self._outbox.append(op)

    def _flush(self) -> None:
        ops, self._outbox = self._outbox, []
        self._queue.put(ops)

    # --- the writer thread -------------------------------------------------------------------

    def _run(self, loop: asyncio.AbstractEventLoop, stopped: asyncio.Future[None]) -> None:
        try:
            while True:
                batch = list(self._queue.get())
                with contextlib.suppress(queue.Empty):
                    while True:
                        batch.extend(self._queue.get_nowait())
                if self._process(batch):
                    return
        finally:
            self._forget(None)
            self._durable.close()
            loop.call_soon_threadsafe(_set_done, stopped)

    def _process(self, batch: list[object]) -> bool:
        pending: list[_Append] = []
        outcomes: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
        stop = False
        for op in batch:
            if isinstance(op, _Append):
                pending.append(op)
                continue
            self._commit(pending, outcomes)
            pending = []
            if isinstance(op, _Forget):
                self._forget(op.directory)
                outcomes.setdefault(op.loop, []).append((op.future, []))
            elif op is _STOP:
                stop = True
        self._commit(pending, outcomes)
        for loop, settled in outcomes.items():
            loop.call_soon_threadsafe(_settle, settled)
        return stop

    def _commit(
        self,
        appends: list[_Append],
        outcomes: dict[asyncio.AbstractEventLoop, list[_Outcome]],
    ) -> None:
        by_path: dict[Path, list[_Append]] = {}
        for op in appends:
            by_path.setdefault(op.path, []).append(op)
        ts = r.utc_now()  # one timestamp per group commit: formatting it costs ~5 µs a file
        batches = [self._stamp(path, ops, ts) for path, ops in by_path.items()]
        for batch in batches:
            if batch.data:
                self._guard(batch, write_all, batch.data)
        to_sync = [batch for batch in batches if batch.data]
        if len(to_sync) == 1:
            self._guard(to_sync[0], os.fdatasync)
        elif to_sync:
            self._sync_together(to_sync)
        for batch in batches:
            if batch.data:  # still there: written and synced
                batch.state.size += len(batch.data)
                batch.state.seq = batch.seq
            for op, outcome in zip(batch.ops, batch.results, strict=True):
                outcomes.setdefault(op.loop, []).append((op.future, outcome))

    def _stamp(self, path: Path, ops: list[_Append], ts: str) -> _Batch:
        """Number and serialise this batch's records for one file (nothing written yet)."""
        try:
            state = self._open(path)
        except OSError as exc:
            error = JournalWriteError(f"cannot open {path}: {exc}")
            error.__cause__ = exc
            return _Batch(path, ops, _OpenFile(-1, 0, 0), [error] * len(ops), b"", 0)
        results: list[list[r.Record] | BaseException] = []
        chunks: list[bytes] = []
        seq = state.seq
        for op in ops:
            stamped: list[r.Record] = []
            lines: list[bytes] = []
            try:
                for payload in op.payloads:
                    record = {"seq": seq + len(stamped) + 1, "ts": ts, **payload}
                    record["seq"], record["ts"] = seq + len(stamped) + 1, ts
                    lines.append(codec.dumps(record))
                    stamped.append(cast(r.Record, record))
            except TypeError as exc:  # not serialisable: this caller's bug, not the batch's
                results.append(exc)
                continue
            seq += len(stamped)
            chunks.append(b"\n".join(lines) + b"\n")
            results.append(stamped)
        return _Batch(path, ops, state, results, b"".join(chunks), seq)

    def _sync_together(self, batches: list[_Batch]) -> None:
        """Make several files durable: one syncfs per file system where it fits, else (or if
        it reports an error) one fdatasync each, so exactly the files that failed fail."""
        by_device: dict[int, list[_Batch]] = {}
        for batch in batches:
            by_device.setdefault(batch.state.device, []).append(batch)
        for device, group in by_device.items():
            if len(group) > 1 and self._durable.try_syncfs(group[0].state.fd, device):
                continue
            self._durable.sync_each(group, lambda b: self._guard(b, os.fdatasync))

    def _guard(self, batch: _Batch, action: Callable[..., object], *args: object) -> None:
        """Run one disk step for a file; on failure undo the file's batch and fail its callers."""
        try:
            action(batch.state.fd, *args)
        except OSError as exc:
            self._undo(batch.path, batch.state)
            error = JournalWriteError(f"cannot append to {batch.path}: {exc}")
            error.__cause__ = exc
            batch.results = [
                res if isinstance(res, BaseException) else error for res in batch.results
            ]
            batch.data = b""

    def _undo(self, path: Path, state: _OpenFile) -> None:
        # Cut any partial line off; if even that fails, the next open sees a torn tail and
        # moves it aside, so the file still never fuses two records.
        with contextlib.suppress(OSError):
            os.ftruncate(state.fd, state.size)
            os.fsync(state.fd)
        self._close(path)

    def _open(self, path: Path) -> _OpenFile:
        state = self._files.get(path)
        if state is not None:
            self._files.move_to_end(path)
            return state
        flags = os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(path, flags)
            created = False
        except FileNotFoundError:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o600)
            created = True
        try:
            if created:
                fsync_dir(path.parent)
                state = _OpenFile(fd, 0, 0, os.fstat(fd).st_dev)
            else:
                with os.fdopen(os.dup(fd), "rb") as f:
                    end = _scan_end(f)
                if end.torn_tail is not None:
                    _move_torn_tail(path, fd, end.good_length, end.torn_tail)
                state = _OpenFile(fd, end.good_length, end.last_seq, os.fstat(fd).st_dev)
        except BaseException:
            os.close(fd)
            raise
        self._files[path] = state
        while len(self._files) > self._max_open_files:
            self._close(next(iter(self._files)))
        return state

    def _close(self, path: Path) -> None:
        state = self._files.pop(path, None)
        if state is not None:
            with contextlib.suppress(OSError):
                os.close(state.fd)

    def _forget(self, directory: Path | None) -> None:
        for path in list(self._files):
            if directory is None or path.is_relative_to(directory):
                self._close(path)


def write_all(fd: int, data: bytes | memoryview) -> None:
    """All of `data` at `fd`'s position: one write, looping only if the kernel takes less (it
    rarely does). The journal's batches and the bundle writer (store/bundle_copy.py) use it."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _set_done(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
