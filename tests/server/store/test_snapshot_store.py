"""The snapshot store on real files: what it records and puts back, and where it refuses to."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from openvaala_server.store.checkpoints import SnapshotError, SnapshotStore, TooLarge, blob_sha


def test_state_and_put_back_round_trip(tmp_path: Path) -> None:
    root, conv = tmp_path / "w", tmp_path / "c"
    root.mkdir()
    conv.mkdir()
    store = SnapshotStore(conv, root)
    store.ensure()
    (root / "run.sh").write_text("echo hi\n")
    os.chmod(root / "run.sh", 0o755)
    os.symlink("run.sh", root / "link")
    script, link = store.state("run.sh", store=True), store.state("link", store=True)
    assert script is not None and script.mode == "100755"
    assert script.sha == blob_sha(b"echo hi\n")
    assert link is not None and link.mode == "120000"
    (root / "run.sh").unlink()
    (root / "link").unlink()
    store.put_back("run.sh", script)
    store.put_back("link", link)
    assert (root / "run.sh").read_text() == "echo hi\n" and os.access(root / "run.sh", os.X_OK)
    assert os.readlink(root / "link") == "run.sh"
    store.put_back("run.sh", None)
    assert not (root / "run.sh").exists()
    with pytest.raises(SnapshotError):
        store.state("../outside", store=False)


def test_never_restores_through_a_symlinked_folder(tmp_path: Path) -> None:
    root, conv, outside = tmp_path / "w", tmp_path / "c", tmp_path / "outside"
    for d in (root / "sub", conv, outside):
        d.mkdir(parents=True)
    (root / "sub" / "x").write_text("mine\n")
    store = SnapshotStore(conv, root)
    store.ensure()
    before = store.state("sub/x", store=True)
    (root / "sub" / "x").unlink()
    (root / "sub").rmdir()
    os.symlink(outside, root / "sub")  # a folder replaced by a link out of the directory
    with pytest.raises(SnapshotError, match="outside the working directory"):
        store.put_back("sub/x", before)
    assert list(outside.iterdir()) == []


def test_whole_tree_changes_follow_gitignore(tmp_path: Path) -> None:
    root, conv = tmp_path / "w", tmp_path / "c"
    root.mkdir()
    conv.mkdir()
    (root / ".gitignore").write_text("build/\n")
    (root / "a.txt").write_text("a\n")
    store = SnapshotStore(conv, root)

    async def run() -> list[tuple[str, object, object]]:
        tree = await store.snapshot()
        (root / "a.txt").write_text("b\n")
        (root / "build").mkdir()
        (root / "build" / "out.o").write_text("ignored\n")
        (root / "new.txt").write_text("n\n")
        return [(p, b, a) for p, b, a in await store.changes_since(tree)]

    changes = asyncio.run(run())
    assert [(p, b is None, a is None) for p, b, a in changes] == [
        ("a.txt", False, False),
        ("new.txt", True, False),
    ]
    assert not (root / ".git").exists()


def test_a_repository_without_commits_inside_the_tree_is_left_out(tmp_path: Path) -> None:
    """`git init` or `cargo new` in the working directory: git refuses to add the whole tree
    while that repository has no commit, so every shell call would go uncaptured."""
    root, conv = tmp_path / "w", tmp_path / "c"
    root.mkdir()
    conv.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / "fresh").mkdir()
    subprocess.run(["git", "init", "-q", str(root / "fresh")], check=True)
    (root / "fresh" / "main.rs").write_text("fn main() {}\n")
    store = SnapshotStore(conv, root)

    async def run() -> list[str]:
        tree = await store.snapshot()
        (root / "a.txt").write_text("b\n")
        (root / "fresh" / "lib.rs").write_text("\n")
        return [p for p, _b, _a in await store.changes_since(tree)]

    assert asyncio.run(run()) == ["a.txt"]


def test_a_file_over_the_limit_is_hashed_to_compare_but_never_stored(tmp_path: Path) -> None:
    """A restore compares what is on disk now, whatever its size; only storing it is refused
    (docs/design.md, "Files the checkpoints cannot keep")."""
    root, conv = tmp_path / "w", tmp_path / "c"
    root.mkdir()
    conv.mkdir()
    store = SnapshotStore(conv, root, max_file_bytes=10)
    store.ensure()
    (root / "big").write_bytes(b"x" * 3_000_000)
    state = store.state("big", store=False)
    assert state is not None and state.sha == blob_sha(b"x" * 3_000_000)
    with pytest.raises(TooLarge):
        store.state("big", store=True)
    assert store.blob_size(state.sha) is None
