"""The baseline of `/diff`: each path's state before the conversation first changed it, undone
turns left out, paths the checkpoints could not keep named instead (domain/worktree_diff.py)."""

from __future__ import annotations

from openvaala_server.domain.checkpoints import Blob, FileChange, TurnFiles
from openvaala_server.domain.worktree_diff import baseline

A, B, C = Blob("a" * 40), Blob("b" * 40), Blob("c" * 40)


def turn(tid: str, *changes: FileChange, restored: bool = False) -> TurnFiles:
    return TurnFiles(tid, "s", {c.path: c for c in changes}, restored=restored)


def test_the_first_turn_that_changed_a_path_gives_its_baseline() -> None:
    base = baseline(
        [
            turn("t1", FileChange("x.txt", A, B)),
            turn("t2", FileChange("x.txt", B, C), FileChange("new.txt", None, A)),
        ]
    )
    assert base.before == {"x.txt": A, "new.txt": None}


def test_undone_turns_and_unkept_paths_are_left_out() -> None:
    big = turn("t2", FileChange("y.txt", A, B))
    big.skipped["big.bin"] = "too_large"
    base = baseline([turn("t1", FileChange("x.txt", A, B), restored=True), big])
    assert base.before == {"y.txt": A}
    assert base.skipped == {"big.bin": "too_large"}
