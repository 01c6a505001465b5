"""The pure parts of checkpoints, bundles and the tree: what a restore writes and where it
conflicts, which bundle members are refused, how the tree hangs together."""

from __future__ import annotations

from typing import Any

import pytest

from openvaala_server.domain import bundle as b
from openvaala_server.domain import checkpoints as ck
from openvaala_server.domain import tree

A, B, C, D = (ck.Blob(c * 40) for c in "abcd")
ID1, ID2, ID3 = "1" * 32, "2" * 32, "3" * 32


def turn(tid: str, **files: tuple[ck.State, ck.State]) -> ck.TurnFiles:
    return ck.TurnFiles(tid, "s", {p: ck.FileChange(p, x, y) for p, (x, y) in files.items()})


def test_restore_goes_back_to_the_first_before_and_checks_the_last_after() -> None:
    turns = [turn("t1", f=(A, B), g=(None, C)), turn("t2", f=(B, C), h=(D, None))]
    plan = ck.plan_restore(turns, {"f": C, "g": C, "h": None})
    assert plan.targets == {"f": A, "g": None, "h": D} and plan.conflicts == []
    assert plan.turn_ids == ["t1", "t2"]
    # The user changed f, deleted g, recreated h since: three conflicts, named by kind.
    plan = ck.plan_restore(turns, {"f": D, "g": None, "h": A})
    assert plan.conflicts == [
        {"path": "f", "reason": "changed_since"},
        {"path": "h", "reason": "created_since"},
    ]
    plan = ck.plan_restore([turn("t1", g=(A, C))], {"g": None})
    assert plan.conflicts == [{"path": "g", "reason": "deleted_since"}]
    # Already as it was: nothing to write, no conflict.
    assert ck.plan_restore([turn("t1", f=(A, B))], {"f": A}).targets == {}


def test_fold_keeps_the_first_before_and_skips_damage() -> None:
    records: list[dict[str, Any]] = [
        ck.changed_record("t1", "s", [ck.FileChange("f", A, B)]),
        ck.changed_record("t1", "s", [ck.FileChange("f", B, C), ck.FileChange("../x", A, B)]),
        {"type": "files_changed", "turnId": "t2", "files": [{"path": "g", "before": "bad"}]},
        ck.changed_record("t3", "s", [ck.FileChange("h", None, A)]),
        ck.restored_record(["t1"], ["f"]),
        ck.pruned_record(["t3"]),
    ]
    turns = ck.fold(records)
    assert set(turns) == {"t1", "t2"}
    assert turns["t1"].files["f"].before == A and turns["t1"].files["f"].after == C
    assert "../x" not in turns["t1"].files and turns["t1"].restored
    assert turns["t2"].files == {}
    assert ck.undoable(turns, ["t2", "t1"]) == []


def test_the_plan_says_which_turn_holds_each_target() -> None:
    # A parent's turn then a fork's: f's state before comes from the parent's, g's the fork's.
    current: dict[str, ck.State] = {"f": C, "g": D}
    plan = ck.plan_restore([turn("p1", f=(A, B)), turn("f1", f=(B, C), g=(None, D))], current)
    assert plan.sources == {"f": "p1", "g": "f1"}


def test_restored_and_pruned_ids_include_turns_the_journal_does_not_hold() -> None:
    records = [
        ck.changed_record("t1", "s", [ck.FileChange("f", A, B)]),
        ck.restored_record(["t1", "parents"], ["f"]),
        ck.pruned_record(["t0"]),
    ]
    assert ck.ids_of(records, ck.FILES_RESTORED) == {"t1", "parents"}
    assert ck.ids_of(records, ck.FILES_PRUNED) == {"t0"}


def test_an_ancestors_span_runs_from_the_message_to_the_branch_turn_and_its_subagents() -> None:
    order = ["r1", "s1", "r2", "s2", "s3", "r3", "s4"]
    roots = {"r1", "r2", "r3"}
    # Branched after r2: its subagents' turns (started before r3) are part of it.
    assert ck.ancestor_span(order, roots, "r2", "r2") == ["r2", "s2", "s3"]
    # The message is an older ancestor's: from this one's first turn.
    assert ck.ancestor_span(order, roots, "elsewhere", "r2") == ["r1", "s1", "r2", "s2", "s3"]
    assert ck.ancestor_span(order, roots, "r1", "r3") == order
    assert ck.ancestor_span(order, roots, "r3", "r2") == []
    assert ck.ancestor_span(order, roots, "r1", "unknown") == []


@pytest.mark.parametrize(
    "name",
    [
        "/etc/passwd",
        "../x",
        f"conversations/{ID1}/../../x",
        f"conversations/{ID1}/a//b",
        f"conversations/{ID1}/./a",
        "conversations/nothex/a",
        f"conversations/{ID1}/",
        "manifest",
        f"conversations/{ID1}/a\\b",
    ],
)
def test_unsafe_member_names_are_refused(name: str) -> None:
    with pytest.raises(b.BundleError):
        b.split_member(name)


def test_member_names_and_manifest() -> None:
    assert b.split_member(f"conversations/{ID1}/attachments/x.png") == (ID1, "attachments/x.png")
    good: dict[str, Any] = {
        "format": b.FORMAT,
        "version": 1,
        "conversationId": ID1,
        "conversations": [{"conversationId": ID1, "files": []}],
    }
    assert b.parse_manifest(good)["conversationId"] == ID1
    with pytest.raises(b.BundleError, match="newer OpenVaala"):
        b.parse_manifest({**good, "version": 3})
    with pytest.raises(b.BundleError, match="no bundle format 0"):
        b.parse_manifest({**good, "version": 0})
    for version in (True, "1", 1.0):  # True would be read as format 1 (a bool is an int)
        with pytest.raises(b.BundleError, match="version is not a number"):
            b.parse_manifest({**good, "version": version})
    # Format 1 gave each file a SHA-256, format 2 a CRC-32: each is read with its own.
    sha = {"path": "a", "size": 1, "sha256": "0" * 64}
    crc = {"path": "a", "size": 1, "crc32": "0" * 8}
    for version, entry, ok in ((1, sha, True), (2, crc, True), (1, crc, False), (2, sha, False)):
        manifest = {**good, "version": version}
        manifest["conversations"] = [{"conversationId": ID1, "files": [entry]}]
        if ok:
            files = b.parse_manifest(manifest)["conversations"][0]["files"]
            assert b.checksum(files[0]) == (
                ("sha256", "0" * 64) if version == 1 else ("crc32", "0" * 8)
            )
        else:
            with pytest.raises(b.BundleError, match="malformed"):
                b.parse_manifest(manifest)
    with pytest.raises(b.BundleError, match="not an OpenVaala bundle"):
        b.parse_manifest({**good, "format": "zip"})
    twice = {**good, "conversations": good["conversations"] * 2}
    with pytest.raises(b.BundleError, match="twice"):
        b.parse_manifest(twice)
    huge = [{"path": "a", "size": b.MAX_MEMBER_BYTES + 1, "sha256": "0" * 64}]
    with pytest.raises(b.BundleError, match="malformed"):
        b.parse_manifest({**good, "conversations": [{"conversationId": ID1, "files": huge}]})
    assert b.excluded("checkpoints/index") and b.excluded("runtime.lock")
    assert not b.excluded("checkpoints/objects/ab/" + "c" * 38)
    # Only what OpenVaala writes in a conversation directory is exported or imported.
    kept = ["metadata.jsonl", f"{ID1}.jsonl", "checkpoints.jsonl", "metadata.jsonl.torn-2"]
    kept += ["attachments/" + "a" * 64 + ".png", "checkpoints/objects/ab/" + "c" * 38]
    assert all(b.kept(rel) for rel in kept)
    for rel in (
        "checkpoints/config",
        "checkpoints/HEAD",
        "checkpoints/info/attributes",
        "checkpoints/hooks/pre-commit",
        "checkpoints/objects/info/alternates",
        "checkpoints/objects/ab/cdef",
        "attachments/shot.png",
        "attachments/x/" + "a" * 64 + ".png",
        "notes.txt",
        "Metadata.jsonl",
    ):
        assert not b.kept(rel), rel


def test_remap_keeps_the_copies_tree() -> None:
    created: dict[str, Any] = {
        "conversationId": ID2,
        "forkedFrom": {"conversationId": ID1, "olderHistory": {"conversationId": ID1}},
    }
    out = b.remap_created(created, {ID1: ID3})
    assert out["conversationId"] == ID2
    assert out["forkedFrom"] == {"conversationId": ID3, "olderHistory": {"conversationId": ID3}}
    assert created["forkedFrom"]["conversationId"] == ID1  # the input is not changed
    assert b.ancestors_of(created) == [ID1]


def test_tree_of_summaries() -> None:
    def summary(cid: str, parent: str | None, kind: str = "fork", at: str = "1") -> dict[str, Any]:
        forked = {"conversationId": parent, "kind": kind, "upToItemId": None} if parent else None
        return {"conversationId": cid, "title": cid[:1], "createdAt": at, "forkedFrom": forked}

    summaries = {
        ID1: summary(ID1, None),
        ID3: summary(ID3, ID1, "rewind", at="3"),
        ID2: summary(ID2, ID1, at="2"),
    }
    assert tree.root_of(ID3, summaries) == ID1
    root = tree.build(ID1, summaries)
    assert root["kind"] == "root" and [c["conversationId"] for c in root["children"]] == [ID2, ID3]
    assert root["children"][1]["kind"] == "rewind"
    # A parent that is gone: the fork heads its own tree, marked.
    orphan = {ID2: summary(ID2, ID1)}
    assert tree.root_of(ID2, orphan) == ID2 and tree.build(ID2, orphan)["parentMissing"]
    # A cycle (only a hand-edited file could hold one) does not loop.
    loop = {ID1: summary(ID1, ID2), ID2: summary(ID2, ID1)}
    assert tree.root_of(ID1, loop) in (ID1, ID2)
