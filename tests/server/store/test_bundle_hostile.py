"""Hostile bundles against the real store, no daemon: git settings planted in a snapshot store,
members OpenVaala never writes, tar entries that are not plain files, a creation record the
journal reader rejects (docs/security.md, "Bundles")."""

from __future__ import annotations

import io
import tarfile
import zlib
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from openvaala_server.domain import bundle as b
from openvaala_server.domain.bundle import BundleError
from openvaala_server.store import bundle as sb
from openvaala_server.store import checkpoints as snapshot_store
from openvaala_server.store.checkpoints import GIT_DIR_NAME, SnapshotError, SnapshotStore
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store

from .helpers import created, message


async def _bundle(tmp_path: Path, cwd: Path | None = None) -> bytes:
    src = DataDir(tmp_path / "src")
    src.ensure()
    store = await Store.open(src)
    c = created("x", **({"cwd": str(cwd)} if cwd else {}))
    await store.create_conversation(c)
    await store.append_items(c["conversationId"], c["rootSessionId"], [message("hi")])
    await store.close()
    return _export(src, c["conversationId"], tmp_path / "b.tar")


def _export(data_dir: DataDir, cid: str, path: Path) -> bytes:
    with open(path, "wb") as out:
        sb.export_bundle(data_dir, cid, out)
    return path.read_bytes()


def _ran(tmp_path: Path) -> list[str]:
    """The markers a planted command would have left."""
    return [p.name for p in tmp_path.glob("ran*")]


def _members(bundle: bytes) -> list[tuple[str, bytes]]:
    with tarfile.open(fileobj=io.BytesIO(bundle)) as tar:
        return [(i.name, tar.extractfile(i).read()) for i in tar if i.isreg()]  # type: ignore[union-attr]


def _write(
    members: list[tuple[str, bytes]], info: Callable[[int, tarfile.TarInfo], None] | None = None
) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for i, (name, data) in enumerate(members):
            entry = tarfile.TarInfo(name)
            entry.size = len(data)
            if info is not None:
                info(i, entry)
            tar.addfile(entry, io.BytesIO(data))
    return out.getvalue()


def _repack(
    bundle: bytes,
    extra: dict[str, bytes],
    edit: Callable[[str, bytes], bytes] = lambda _n, d: d,
    info: Callable[[int, tarfile.TarInfo], None] | None = None,
) -> bytes:
    """The bundle with `extra` files added to its conversation, each member passed through
    `edit`, and a manifest that lists it all with the right sizes and checksums."""
    members = _members(bundle)
    manifest = orjson.loads(members[0][1])
    entry = manifest["conversations"][0]
    cid = entry["conversationId"]
    files = {name: edit(name, data) for name, data in members[1:]}
    for rel, data in extra.items():
        files[f"{b.PREFIX}{cid}/{rel}"] = data
        entry["files"].append({"path": rel, "size": 0, "crc32": ""})
    for f in entry["files"]:
        data = files[f"{b.PREFIX}{cid}/{f['path']}"]
        f["size"], f["crc32"] = len(data), f"{zlib.crc32(data):08x}"
    return _write([(b.MANIFEST, orjson.dumps(manifest)), *files.items()], info)


def _import(tmp_path: Path, bundle: bytes) -> tuple[DataDir, sb.ImportResult]:
    dst = DataDir(tmp_path / "dst")
    dst.ensure()
    return dst, sb.import_bundle(dst, io.BytesIO(bundle), exists=lambda _c: False)


def _refused(tmp_path: Path, bundle: bytes, reason: str) -> None:
    with pytest.raises(BundleError, match=reason):
        _import(tmp_path, bundle)
    dst = DataDir(tmp_path / "dst")
    assert list(dst.conversations_dir.iterdir()) == []
    assert not [p for p in dst.root.iterdir() if p.name.startswith("import-")]


def _hostile_config(marker: Path) -> bytes:
    return (
        f'[core]\n\tbare = true\n\tfsmonitor = "touch {marker}.fsmonitor; false"\n'
        f'[filter "x"]\n\tclean = "touch {marker}; cat"\n'
    ).encode()


async def test_a_bundle_cannot_plant_git_settings_that_the_next_snapshot_runs(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran"
    hostile = _repack(
        await _bundle(tmp_path),
        {
            f"{GIT_DIR_NAME}/HEAD": b"ref: refs/heads/main\n",
            f"{GIT_DIR_NAME}/objects/00/0": b"",
            f"{GIT_DIR_NAME}/refs/.keep": b"",
            f"{GIT_DIR_NAME}/config": _hostile_config(marker),
            f"{GIT_DIR_NAME}/info/attributes": b"* filter=x\n",
        },
    )
    dst, result = _import(tmp_path, hostile)
    conversation = dst.conversation_dir(result.imported[0])
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("hello")
    # What the daemon's checkpoints do at the imported conversation's next turn:
    snap = SnapshotStore(conversation, work)
    tree = await snap.snapshot()
    assert _ran(tmp_path) == []
    assert [rel for rel, _b, _a in await snap.changes_since(tree)] == []
    assert "filter" not in (conversation / GIT_DIR_NAME / "config").read_text()
    assert not (conversation / GIT_DIR_NAME / "info").exists()


async def test_the_snapshot_store_rewrites_what_git_would_honour(tmp_path: Path) -> None:
    """Whatever put them there (a bundle of another version, a copied directory), git settings
    in the store are replaced before git runs."""
    conversation, work, elsewhere = tmp_path / "c", tmp_path / "work", tmp_path / "elsewhere"
    for folder in (conversation, work, elsewhere / "objects"):
        folder.mkdir(parents=True)
    (work / "a.txt").write_text("hello")
    store = SnapshotStore(conversation, work)
    await store.snapshot()
    git = conversation / GIT_DIR_NAME
    marker = tmp_path / "ran"
    (git / "config").write_bytes(_hostile_config(marker))
    (git / "info").mkdir(exist_ok=True)
    (git / "info" / "attributes").write_text("* filter=x\n")
    (git / "hooks").mkdir()
    (git / "hooks" / "post-index-change").write_text(f"#!/bin/sh\ntouch {marker}.hook\n")
    (git / "hooks" / "post-index-change").chmod(0o700)
    (git / "objects" / "info").mkdir(exist_ok=True)
    (git / "objects" / "info" / "alternates").write_text(f"{elsewhere / 'objects'}\n")
    (git / "objects" / "pack").mkdir(exist_ok=True)  # git's own, for a file over 512 MiB
    (git / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    (git / "refs" / "heads" / "main").write_text("0" * 40 + "\n")
    (work / "a.txt").write_text("changed")
    store = SnapshotStore(conversation, work)
    await store.snapshot()
    assert _ran(tmp_path) == []
    assert sorted(p.name for p in git.iterdir()) == ["HEAD", "config", "index", "objects", "refs"]
    assert "filter" not in (git / "config").read_text()
    assert not (git / "objects" / "info").exists() and list((git / "refs").iterdir()) == []
    assert (git / "objects" / "pack").is_dir()


def test_a_blob_is_never_inflated_past_the_restore_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot_store, "RESTORE_LIMIT_BYTES", 1024)  # 256 MiB, for real
    (tmp_path / "c").mkdir()
    store = SnapshotStore(tmp_path / "c", tmp_path, max_file_bytes=1024)
    store.ensure()
    sha = "ab" + "0" * 38  # its name is not checked against its content when read
    path = tmp_path / "c" / GIT_DIR_NAME / "objects" / "ab" / ("0" * 38)
    path.parent.mkdir()
    path.write_bytes(zlib.compress(b"blob 1048576\0" + bytes(1 << 20), 9))  # 1 KiB on disk
    with pytest.raises(SnapshotError, match="larger than the 1024 bytes a restore reads back"):
        store.read_blob(sha)
    # A restore looks at every blob before it writes a file: this one refuses it whole.
    with pytest.raises(SnapshotError, match="larger than the 1024 bytes a restore reads back"):
        store.has_blob(sha)
    assert not store.has_blob("cd" + "0" * 38)
    path.write_bytes(zlib.compress(b"blob 5\0hello"))
    assert store.has_blob(sha) and store.read_blob(sha) == b"hello"
    path.write_bytes(zlib.compress(b"blob 5\0hello")[:-3])
    with pytest.raises(SnapshotError, match="damaged"):
        store.read_blob(sha)


async def test_only_files_openvaala_writes_are_exported_and_imported(tmp_path: Path) -> None:
    bundle = await _bundle(tmp_path)
    _refused(
        tmp_path, _repack(bundle, {"notes.txt": b"x"}), r"'conversations/\w+/notes.txt' is not a"
    )
    _refused(tmp_path, _repack(bundle, {"a": b"x", "a/b": b"y"}), r"/a' is not a file OpenVaala")
    shot = "attachments/" + "a" * 64 + ".png"
    dst, result = _import(tmp_path, _repack(bundle, {shot: b"png"}))
    assert (dst.conversation_dir(result.imported[0]) / shot).read_bytes() == b"png"


async def test_an_export_holds_no_git_settings_and_an_older_one_still_imports(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("hello")
    src = DataDir(tmp_path / "src")
    src.ensure()
    store = await Store.open(src)
    c = created("x", cwd=str(work))
    await store.create_conversation(c)
    await store.close()
    snap = SnapshotStore(src.conversation_dir(c["conversationId"]), work)
    tree = await snap.snapshot()
    bundle = _export(src, c["conversationId"], tmp_path / "b.tar")
    names = [name.split("/", 2)[2] for name, _d in _members(bundle)[1:]]
    assert names and all(b.kept(n) for n in names), names
    assert f"{GIT_DIR_NAME}/config" not in names and f"{GIT_DIR_NAME}/HEAD" not in names
    # Bundles of earlier versions carried the store's HEAD and config: skipped, not refused.
    older = _repack(
        bundle,
        {f"{GIT_DIR_NAME}/HEAD": b"ref: refs/heads/main\n", f"{GIT_DIR_NAME}/config": b"[core]\n"},
    )
    dst, result = _import(tmp_path, older)
    copy = SnapshotStore(dst.conversation_dir(result.imported[0]), work)
    (work / "a.txt").write_text("changed")
    changes = await copy.changes_since(tree)
    assert [rel for rel, _b, _a in changes] == ["a.txt"]
    before = changes[0][1]
    assert before is not None and copy.read_blob(before.sha) == b"hello"


async def test_tar_entries_that_are_not_plain_files_are_refused(tmp_path: Path) -> None:
    bundle = await _bundle(tmp_path)

    def sparse(i: int, info: tarfile.TarInfo) -> None:
        if i == 1:  # PAX sparse 0.1: tarfile reads it as a file of the "real" size
            size = str(info.size)
            info.pax_headers = {"GNU.sparse.map": f"0,{size}", "GNU.sparse.size": size}

    _refused(tmp_path, _repack(bundle, {}, info=sparse), "is a sparse file")

    def contiguous(i: int, info: tarfile.TarInfo) -> None:
        if i == 1:
            info.type = tarfile.CONTTYPE

    _refused(tmp_path, _repack(bundle, {}, info=contiguous), "only regular files")

    def garbage(i: int, info: tarfile.TarInfo) -> None:
        if i == 1:
            info.pax_headers = {"GNU.sparse.size": "zz"}

    _refused(tmp_path, _repack(bundle, {}, info=garbage), "damaged or truncated")

    def garbage_first(i: int, info: tarfile.TarInfo) -> None:
        if i == 0:  # read when the archive is opened
            info.pax_headers = {"GNU.sparse.size": "zz"}

    _refused(tmp_path, _repack(bundle, {}, info=garbage_first), "not a tar archive")


async def test_the_member_limit_counts_every_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = await _bundle(tmp_path)
    count = len(_members(bundle))
    monkeypatch.setattr(b, "MAX_MEMBERS", count - 1)
    _refused(tmp_path, bundle, f"more than {count - 1} members")
    monkeypatch.setattr(b, "MAX_MEMBERS", count)
    _dst, result = _import(tmp_path, bundle)
    assert result.imported


async def test_a_creation_record_the_journal_reader_rejects_is_refused(
    tmp_path: Path,
) -> None:
    def string_seq(name: str, data: bytes) -> bytes:
        if not name.endswith("/metadata.jsonl"):
            return data
        first, _, rest = data.partition(b"\n")
        return orjson.dumps({**orjson.loads(first), "seq": "1"}) + b"\n" + rest

    _refused(
        tmp_path,
        _repack(await _bundle(tmp_path), {}, edit=string_seq),
        "metadata.jsonl: the first record: no integer seq",
    )


def test_a_file_a_whole_tree_snapshot_stored_past_the_capture_limit_is_read_back(
    tmp_path: Path,
) -> None:
    """`max_file_mb` bounds what the file tools capture; `git add -A` (a shell call's snapshot)
    stores larger files too, and a restore must be able to put them back."""
    (tmp_path / "c").mkdir()
    store = SnapshotStore(tmp_path / "c", tmp_path, max_file_bytes=1024)
    store.ensure()
    sha = "ab" + "0" * 38
    path = tmp_path / "c" / GIT_DIR_NAME / "objects" / "ab" / ("0" * 38)
    path.parent.mkdir()
    content = bytes(range(256)) * 4096  # 1 MiB
    path.write_bytes(zlib.compress(b"blob %d\0" % len(content) + content))
    assert store.has_blob(sha)
    assert store.read_blob(sha) == content
