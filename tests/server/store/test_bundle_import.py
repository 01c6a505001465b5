"""Import against the real store, no daemon: what it checks before anything is moved into place,
and the index entry written behind its answer (every read of the index waits for it)."""

from __future__ import annotations

import hashlib
import io
import os
import resource
import tarfile
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO

import orjson
import pytest

from openvaala_server.domain import bundle as b
from openvaala_server.domain import meta as m
from openvaala_server.domain.bundle import BundleError
from openvaala_server.store import bundle as sb
from openvaala_server.store import index as ix
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store

from .helpers import created, message, rebuilt_dump


async def _conversation(store: Store, texts: list[str]) -> tuple[str, str]:
    c = created("exported one")
    await store.create_conversation(c)
    cid, sid = c["conversationId"], c["rootSessionId"]
    await store.append_items(cid, sid, [message(t) for t in texts])
    return cid, sid


def _export(data_dir: DataDir, cid: str, path: Path) -> bytes:
    with open(path, "wb") as out:
        sb.export_bundle(data_dir, cid, out)
    return path.read_bytes()


def _import(data_dir: DataDir, source: IO[bytes]) -> sb.ImportResult:
    return sb.import_bundle(data_dir, source, exists=lambda _cid: False)


def _import_file(data_dir: DataDir, path: Path) -> sb.ImportResult:
    with open(path, "rb") as f:
        return _import(data_dir, f)


def _import_pipe(data_dir: DataDir, bundle: bytes) -> sb.ImportResult:
    """From a source that cannot seek (it is copied aside first)."""
    r, w = os.pipe()

    def feed() -> None:
        os.write(w, bundle)
        os.close(w)

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        with os.fdopen(r, "rb") as pipe:
            return _import(data_dir, pipe)
    finally:
        feeder.join()


def _other(tmp_path: Path) -> DataDir:
    other = DataDir(tmp_path / "other")
    other.ensure()
    return other


def _edited(
    bundle: bytes, edit: Callable[[str, bytes], bytes] = lambda _name, data: data, version: int = 2
) -> bytes:
    """The bundle with each member's bytes passed through `edit`, and a manifest of format
    `version` that agrees with them (sizes, checksums): what a hostile or broken exporter, or an
    older OpenVaala, could write."""
    with tarfile.open(fileobj=io.BytesIO(bundle)) as tar:
        members = [(i.name, tar.extractfile(i).read()) for i in tar if i.isreg()]  # type: ignore[union-attr]
    manifest = orjson.loads(members[0][1])
    manifest["version"] = version
    files = {}
    for name, data in members[1:]:
        data = edit(name, data)
        files[name] = data
    for entry in manifest["conversations"]:
        for f in entry["files"]:
            data = files[f"{b.PREFIX}{entry['conversationId']}/{f['path']}"]
            f["size"] = len(data)
            f.pop("crc32", None)
            if version == 1:
                f["sha256"] = hashlib.sha256(data).hexdigest()
            else:
                f["crc32"] = f"{zlib.crc32(data):08x}"
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in [(b.MANIFEST, orjson.dumps(manifest)), *files.items()]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


async def test_the_index_entry_is_written_behind_the_answer_and_reads_wait_for_it(
    store: Store, data_dir: DataDir, tmp_path: Path
) -> None:
    cid, _sid = await _conversation(store, ["alpha words", "beta zebra", "gamma"])
    bundle = tmp_path / "b.tar"
    _export(data_dir, cid, bundle)
    other = _other(tmp_path)
    target = await Store.open(other)
    try:
        result = _import_file(other, bundle)
        calls: list[threading.Thread] = []

        def read() -> tuple[m.ConversationMeta, ix.ItemStats] | None:
            calls.append(threading.current_thread())
            return result.index[cid]()

        await target.index_new(cid, read)
        assert calls == []  # nothing read yet: the import's caller answers first
        listed, _ = await target.list_conversations(search="zebra")
        assert len(calls) == 1 and calls[0] is not threading.main_thread()
        assert [c["conversationId"] for c in listed] == [cid]
        assert listed[0]["messageCount"] == 3 and listed[0]["title"] == "exported one"
        assert await target.dump_index() == await rebuilt_dump(other, tmp_path)
    finally:
        await target.close()


async def test_a_deferred_index_write_that_fails_leaves_the_index_to_rebuild(
    data_dir: DataDir,
) -> None:
    target = await Store.open(data_dir)
    c = created()

    def fails() -> tuple[m.ConversationMeta, ix.ItemStats] | None:
        raise OSError("the disk went away")

    await target.index_new(c["conversationId"], fails)
    assert await target.list_conversations() == ([], None)  # later reads still answer
    await target.close()
    assert ix.needs_rebuild(data_dir.metadata_db) == "the last server did not close it cleanly"


async def test_round_trip_is_byte_identical_and_a_pipe_can_be_the_source(
    store: Store, data_dir: DataDir, tmp_path: Path
) -> None:
    cid, _sid = await _conversation(store, [f"message {n} " * 50 for n in range(200)])
    attachments = data_dir.conversation_dir(cid) / "attachments"
    attachments.mkdir()
    shot = os.urandom(3 * 1024 * 1024 + 7)
    (attachments / f"{hashlib.sha256(shot).hexdigest()}.png").write_bytes(shot)
    bundle = _export(data_dir, cid, tmp_path / "b.tar")
    with tarfile.open(tmp_path / "b.tar") as tar:  # a plain tar that `tar` reads
        assert tar.getnames()[0] == b.MANIFEST
    for dest in ("file", "pipe"):
        other = DataDir(tmp_path / dest)
        other.ensure()
        if dest == "file":
            _import_file(other, tmp_path / "b.tar")
        else:
            _import_pipe(other, bundle)
        source, copy = data_dir.conversation_dir(cid), other.conversation_dir(cid)
        names = sorted(str(p.relative_to(source)) for p in source.rglob("*") if p.is_file())
        assert names == sorted(str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file())
        for name in names:
            assert (copy / name).read_bytes() == (source / name).read_bytes(), (dest, name)
        assert not [p for p in other.root.iterdir() if p.name.startswith("import-")]


@pytest.mark.parametrize(
    ("journal", "line", "reason"),
    [
        ("session", b"\x00\x01binary junk", ":2: not a journal record"),
        ("session", b"a line of text", ":2: not a journal record"),
        ("session", b'{"cut": "in the mid', ":2: not a journal record"),
        ("metadata", b"[1, 2, 3]", ":2: not a journal record"),
    ],
)
async def test_a_journal_that_is_not_one_is_refused_with_nothing_written(
    store: Store, data_dir: DataDir, tmp_path: Path, journal: str, line: bytes, reason: str
) -> None:
    cid, sid = await _conversation(store, ["one", "two"])
    name = f"{sid}.jsonl" if journal == "session" else "metadata.jsonl"

    def damage(member: str, data: bytes) -> bytes:
        if not member.endswith(name):
            return data
        first, _, rest = data.partition(b"\n")
        return first + b"\n" + line + b"\n" + rest

    bundle = _edited(_export(data_dir, cid, tmp_path / "b.tar"), damage)
    other = _other(tmp_path)
    with pytest.raises(BundleError, match=reason):
        _import(other, io.BytesIO(bundle))
    assert list(other.conversations_dir.iterdir()) == []
    assert not [p for p in other.root.iterdir() if p.name.startswith("import-")]


async def test_a_record_the_reader_cannot_use_is_skipped_as_on_disk(
    store: Store, data_dir: DataDir, tmp_path: Path
) -> None:
    """Lines shaped as records are not parsed before the answer: one that is not JSON is
    imported and skipped by every reader, as a line damaged on disk is."""
    cid, sid = await _conversation(store, ["one", "two"])

    def damage(member: str, data: bytes) -> bytes:
        if not member.endswith(f"{sid}.jsonl"):
            return data
        first, _, rest = data.partition(b"\n")
        return first + b"\n{not json}\n" + rest

    bundle = _edited(_export(data_dir, cid, tmp_path / "b.tar"), damage)
    other = _other(tmp_path)
    target = await Store.open(other)
    try:
        result = _import(other, io.BytesIO(bundle))
        await target.index_new(cid, result.index[cid])
        items = await target.read_all_items(cid, sid)
        assert [i["text"] for i in items] == ["one", "two"]
        listed, _ = await target.list_conversations()
        assert listed[0]["messageCount"] == 2
        assert await target.dump_index() == await rebuilt_dump(other, tmp_path)
    finally:
        await target.close()


async def test_a_conversation_of_a_newer_format_is_refused(
    store: Store, data_dir: DataDir, tmp_path: Path
) -> None:
    cid, _sid = await _conversation(store, ["one"])

    def newer(member: str, data: bytes) -> bytes:
        if not member.endswith("metadata.jsonl"):
            return data
        first, _, rest = data.partition(b"\n")
        record = orjson.loads(first)
        record["formatVersion"] = 99
        return orjson.dumps(record) + b"\n" + rest

    bundle = _edited(_export(data_dir, cid, tmp_path / "b.tar"), newer)
    other = _other(tmp_path)
    with pytest.raises(BundleError, match="written by a newer OpenVaala"):
        _import(other, io.BytesIO(bundle))
    assert list(other.conversations_dir.iterdir()) == []


async def test_keep_both_with_a_new_cwd_even_after_a_line_the_reader_skips(
    store: Store, data_dir: DataDir, tmp_path: Path
) -> None:
    """The appended `conversation_cwd_set` follows the last record the reader can use."""
    cid, _sid = await _conversation(store, ["one"])

    def damage(member: str, data: bytes) -> bytes:
        return data + b"{not json}\n" if member.endswith("metadata.jsonl") else data

    bundle = _edited(_export(data_dir, cid, tmp_path / "b.tar"), damage)
    other = _other(tmp_path)
    target = await Store.open(other)
    try:
        first = _import(other, io.BytesIO(bundle))
        await target.index_new(cid, first.index[cid])
        again = sb.import_bundle(
            other,
            io.BytesIO(bundle),
            exists=target.exists,
            on_conflict="keep-both",
            cwd=str(tmp_path),
        )
        copy = again.renamed[cid]
        assert again.imported == [copy] and copy != cid
        await target.index_new(copy, again.index[copy])
        listed, _ = await target.list_conversations()
        cwds = {c["conversationId"]: c["cwd"] for c in listed}
        assert cwds == {cid: "/work/project", copy: str(tmp_path)}
        meta = await target.load_meta(copy)
        assert meta is not None and meta.cwd == str(tmp_path)
        assert await target.dump_index() == await rebuilt_dump(other, tmp_path)
    finally:
        await target.close()


async def test_a_bundle_of_format_1_still_imports_and_its_checksums_are_checked(
    store: Store, data_dir: DataDir, tmp_path: Path
) -> None:
    """Format 1 gave each file a SHA-256; format 2 (written since) a CRC-32."""
    cid, sid = await _conversation(store, ["one", "two"])
    exported = _export(data_dir, cid, tmp_path / "b.tar")
    with tarfile.open(tmp_path / "b.tar") as tar:
        manifest = orjson.loads(tar.extractfile(b.MANIFEST).read())  # type: ignore[union-attr]
    assert manifest["version"] == 2 and "crc32" in manifest["conversations"][0]["files"][0]
    old = _edited(exported, version=1)
    damaged = bytearray(old)
    damaged[old.index(b'"two"') + 1] ^= 0x20
    with pytest.raises(BundleError, match="checksum differs"):
        _import(_other(tmp_path), io.BytesIO(bytes(damaged)))
    other = DataDir(tmp_path / "v1")
    other.ensure()
    _import(other, io.BytesIO(old))
    name = f"{sid}.jsonl"
    copy = other.conversation_dir(cid) / name
    assert copy.read_bytes() == (data_dir.conversation_dir(cid) / name).read_bytes()


async def test_a_snapshot_store_of_many_objects_moves_within_a_small_descriptor_limit(
    store: Store, data_dir: DataDir, tmp_path: Path
) -> None:
    """1,024 open files is a common limit; a private snapshot store holds thousands of objects."""
    cid, _sid = await _conversation(store, ["one"])
    objects = data_dir.conversation_dir(cid) / "checkpoints" / "objects"
    for n in range(600):
        folder = objects / f"{n % 16:02x}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{n:038x}").write_bytes(f"object {n}".encode())
    other = _other(tmp_path)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(300, hard), hard))
    try:
        _export(data_dir, cid, tmp_path / "b.tar")
        _import_file(other, tmp_path / "b.tar")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    copied = other.conversation_dir(cid) / "checkpoints" / "objects"
    assert len(list(copied.rglob("*/*"))) == 600
    assert (copied / "07" / f"{599:038x}").read_bytes() == b"object 599"
