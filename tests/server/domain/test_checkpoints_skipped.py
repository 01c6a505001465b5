"""Files the checkpoints could not keep, in the pure parts: a `files_changed` record's `skipped`
folds into its turn, a restore leaves those paths as they are and lists them, and a turn that
only skipped files is still the one an undo takes (docs/design.md, "Files the checkpoints cannot
keep")."""

from __future__ import annotations

from openvaala_server.domain import checkpoints as ck

A, B = ck.Blob("a" * 40), ck.Blob("b" * 40)


def test_a_skipped_path_stays_skipped_for_its_turn() -> None:
    records = [
        ck.changed_record("t1", "s", [ck.FileChange("db", None, A), ck.FileChange("f", None, B)]),
        ck.changed_record("t1", "s", [], {"db": ck.TOO_LARGE}),
        ck.changed_record("t1", "s", [ck.FileChange("db", A, B)]),
    ]
    [turn] = ck.fold(records).values()
    assert list(turn.files) == ["f"] and turn.skipped == {"db": ck.TOO_LARGE}
    assert turn.skipped_list() == [{"path": "db", "reason": "too_large"}]


def test_a_restore_leaves_skipped_paths_and_lists_them() -> None:
    first = ck.TurnFiles("t1", "s", {"db": ck.FileChange("db", None, A)})
    second = ck.TurnFiles(
        "t2", "s", {"f": ck.FileChange("f", None, B)}, skipped={"db": "too_large"}
    )
    # db changed in t2 without a snapshot: neither restored nor a conflict.
    plan = ck.plan_restore([first, second], {"db": B, "f": B})
    assert plan.targets == {"f": None} and plan.conflicts == []
    assert plan.skipped == [{"path": "db", "reason": "too_large"}]


def test_a_turn_with_only_skipped_files_is_undone_first() -> None:
    turns = ck.fold(
        [
            ck.changed_record("t1", "s", [ck.FileChange("f", None, A)]),
            ck.changed_record("t2", "s", [], {"db": ck.TOO_LARGE}),
        ]
    )
    assert [t.turn_id for t in ck.undoable(turns, ["t1", "t2"])] == ["t1", "t2"]
