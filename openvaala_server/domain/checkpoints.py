"""Checkpoints: what each turn did to the files of its working directory, and how to undo it.

Pure. The runtime records, after each tool call that changed files, a `files_changed` record
(docs/storage.md, "Checkpoints") naming each path with its content before and after, as a git
blob id and mode; a restore appends `files_restored`. `fold` turns those records into one
`TurnFiles` per turn, and `plan_restore` decides what undoing some turns writes and which paths
the user changed since (conflicts, never overwritten without `force`). A file the store cannot
keep (larger than `max_file_mb`) is recorded as skipped with the call that changed it: a restore
leaves it as it is and names it (docs/design.md, "Files the checkpoints cannot keep").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, TypedDict

from openvaala_server.domain.permissions import VCS_DIRS

FILES_CHANGED: Final = "files_changed"
FILES_RESTORED: Final = "files_restored"
# {turnIds}: the snapshots of these turns were dropped to keep the store within its bound.
FILES_PRUNED: Final = "files_pruned"
RECORD_TYPES: Final = frozenset({FILES_CHANGED, FILES_RESTORED, FILES_PRUNED})

FILE_MODE: Final = "100644"
EXEC_MODE: Final = "100755"
LINK_MODE: Final = "120000"
MODES: Final = frozenset({FILE_MODE, EXEC_MODE, LINK_MODE})
# Why a changed file was not captured: larger than `[checkpoints] max_file_mb`.
TOO_LARGE: Final = "too_large"
SKIP_REASONS: Final = frozenset({TOO_LARGE})


@dataclass(frozen=True)
class Blob:
    """One version of a file: its git blob id and git mode."""

    sha: str
    mode: str = FILE_MODE

    def to_wire(self) -> dict[str, str]:
        return {"sha": self.sha, "mode": self.mode}


State = Blob | None  # None: the path did not exist


class FileChangeWire(TypedDict):
    path: str
    before: dict[str, str] | None
    after: dict[str, str] | None


class SkippedFile(TypedDict):
    """A file a turn changed that the store could not keep: a restore leaves it as it is."""

    path: str
    reason: str  # TOO_LARGE


@dataclass
class FileChange:
    path: str
    before: State
    after: State


@dataclass
class TurnFiles:
    turn_id: str
    session_id: str
    files: dict[str, FileChange] = field(default_factory=dict)
    restored: bool = False
    skipped: dict[str, str] = field(default_factory=dict)  # path → reason

    def add(self, changes: Iterable[FileChange], skipped: Mapping[str, str]) -> None:
        """One call's changes: a path's first `before` stays (the state before the turn); a
        path skipped once stays skipped for the whole turn (its state before is not known)."""
        for path, reason in skipped.items():
            self.files.pop(path, None)
            self.skipped.setdefault(path, reason)
        for change in changes:
            if change.path in self.skipped:
                continue
            known = self.files.get(change.path)
            if known is None:
                self.files[change.path] = change
            else:
                known.after = change.after

    def skipped_list(self) -> list[SkippedFile]:
        return [{"path": p, "reason": r} for p, r in sorted(self.skipped.items())]


class RestoreConflict(TypedDict):
    path: str
    reason: str  # "changed_since" | "deleted_since" | "created_since"


@dataclass
class RestorePlan:
    """What a restore writes (`targets`: path → state to put back) and where it conflicts.
    `sources`: path → the turn whose `before` is its target (the store holding that blob is
    that turn's conversation's: a fork's restore can reach into its parent's turns)."""

    targets: dict[str, State]
    conflicts: list[RestoreConflict]
    turn_ids: list[str]
    sources: dict[str, str] = field(default_factory=dict)
    skipped: list[SkippedFile] = field(default_factory=list)  # left as they are


def blob_from_wire(value: object) -> State:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("not an object")
    sha, mode = value.get("sha"), value.get("mode", FILE_MODE)
    if not is_sha(sha) or mode not in MODES:
        raise ValueError("bad blob")
    assert isinstance(sha, str)
    return Blob(sha, str(mode))


def is_sha(value: object) -> bool:
    return (
        isinstance(value, str) and len(value) == 40 and all(c in "0123456789abcdef" for c in value)
    )


def is_safe_relpath(path: object) -> bool:
    """A path relative to the working directory that stays inside it."""
    if not isinstance(path, str) or not path or "\0" in path or path.startswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def never_restored(path: str, target: State) -> bool:
    """Whether a restore must leave `path` alone: content for a version-control directory, or
    an executable under a `hooks/` folder, would run unconfined at the user's next git command
    (docs/security.md). Removing what a turn added there is still done."""
    if target is None:
        return False
    parts = path.split("/")
    if any(part in VCS_DIRS for part in parts):
        return True
    return target.mode == EXEC_MODE and "hooks" in parts[:-1]


def changed_record(
    turn_id: str,
    session_id: str,
    changes: Iterable[FileChange],
    skipped: Mapping[str, str] | None = None,
) -> dict[str, object]:
    files: list[FileChangeWire] = [
        {
            "path": c.path,
            "before": c.before.to_wire() if c.before else None,
            "after": c.after.to_wire() if c.after else None,
        }
        for c in changes
    ]
    record: dict[str, object] = {
        "type": FILES_CHANGED,
        "turnId": turn_id,
        "sessionId": session_id,
        "files": files,
    }
    if skipped:
        listed: list[SkippedFile] = [{"path": p, "reason": r} for p, r in sorted(skipped.items())]
        record["skipped"] = listed
    return record


def _skipped_of(record: Mapping[str, object]) -> dict[str, str]:
    found: dict[str, str] = {}
    listed = record.get("skipped")
    for entry in listed if isinstance(listed, list) else ():
        if isinstance(entry, dict) and is_safe_relpath(entry.get("path")):
            reason = entry.get("reason")
            found[str(entry["path"])] = reason if reason in SKIP_REASONS else TOO_LARGE
    return found


def restored_record(turn_ids: list[str], paths: list[str]) -> dict[str, object]:
    return {"type": FILES_RESTORED, "turnIds": turn_ids, "paths": paths}


def fold(records: Iterable[Mapping[str, object]]) -> dict[str, TurnFiles]:
    """Turns by id in the order they first changed a file. Damaged entries are skipped."""
    turns: dict[str, TurnFiles] = {}
    for record in records:
        kind = record.get("type")
        if kind == FILES_CHANGED:
            tid, sid = record.get("turnId"), record.get("sessionId")
            files = record.get("files")
            if not isinstance(tid, str) or not isinstance(files, list):
                continue
            turn = turns.setdefault(tid, TurnFiles(tid, str(sid or "")))
            changes: list[FileChange] = []
            for entry in files:
                if not isinstance(entry, dict) or not is_safe_relpath(entry.get("path")):
                    continue
                try:
                    before = blob_from_wire(entry.get("before"))
                    after = blob_from_wire(entry.get("after"))
                except ValueError:
                    continue
                changes.append(FileChange(str(entry["path"]), before, after))
            turn.add(changes, _skipped_of(record))
        elif kind in (FILES_RESTORED, FILES_PRUNED):
            ids = record.get("turnIds")
            for tid in ids if isinstance(ids, list) else ():
                if isinstance(tid, str) and tid in turns:
                    if kind == FILES_PRUNED:
                        del turns[tid]
                    else:
                        turns[tid].restored = True
    return turns


def plan_restore(turns: list[TurnFiles], current: dict[str, State]) -> RestorePlan:
    """Undo `turns` (oldest first): each path goes back to its state before the first of them
    that changed it. A path whose content now differs from what the last of them left there was
    changed by someone else since: a conflict. A path one of them skipped is left as it is (its
    states between those turns are not all known): listed in `skipped`. `current` holds every
    path of every turn."""
    first_before: dict[str, State] = {}
    first_turn: dict[str, str] = {}
    last_after: dict[str, State] = {}
    skipped: dict[str, str] = {}
    for turn in turns:
        for path, reason in turn.skipped.items():
            skipped.setdefault(path, reason)
    for turn in turns:
        for path, change in turn.files.items():
            if path in skipped:
                continue
            if path not in first_before:
                first_before[path] = change.before
                first_turn[path] = turn.turn_id
            last_after[path] = change.after
    targets: dict[str, State] = {}
    conflicts: list[RestoreConflict] = []
    for path in sorted(first_before):
        now, left = current.get(path), last_after[path]
        if now == first_before[path]:
            continue  # already as it was
        if now != left:
            if now is None:
                reason = "deleted_since"
            elif left is None:
                reason = "created_since"
            else:
                reason = "changed_since"
            conflicts.append({"path": path, "reason": reason})
        targets[path] = first_before[path]
    sources = {path: first_turn[path] for path in targets}
    kept_as_is: list[SkippedFile] = [{"path": p, "reason": r} for p, r in sorted(skipped.items())]
    return RestorePlan(targets, conflicts, [t.turn_id for t in turns], sources, kept_as_is)


def pruned_record(turn_ids: list[str]) -> dict[str, object]:
    return {"type": FILES_PRUNED, "turnIds": turn_ids}


def blobs_of(turns: Iterable[TurnFiles]) -> set[str]:
    """Every blob id the turns refer to: what the store must keep."""
    keep: set[str] = set()
    for turn in turns:
        for change in turn.files.values():
            keep.update(b.sha for b in (change.before, change.after) if b is not None)
    return keep


def change_kind(change: FileChange) -> str:
    if change.before is None:
        return "created"
    if change.after is None:
        return "deleted"
    return "modified"


def undoable(turns: dict[str, TurnFiles], order: list[str]) -> list[TurnFiles]:
    """The turns not yet restored, in `order` (turn ids as they started)."""
    rank = {tid: i for i, tid in enumerate(order)}
    live = [t for t in turns.values() if not t.restored and (t.files or t.skipped)]
    return sorted(live, key=lambda t: rank.get(t.turn_id, len(rank)))


def ids_of(records: Iterable[Mapping[str, object]], kind: str) -> set[str]:
    """Every turn id named by the `files_restored` or `files_pruned` records (`kind`), known
    turns or not: a fork's journal records restores of turns its parent ran."""
    found: set[str] = set()
    for record in records:
        ids = record.get("turnIds") if record.get("type") == kind else None
        found.update(t for t in (ids if isinstance(ids, list) else ()) if isinstance(t, str))
    return found


def ancestor_span(order: list[str], roots: set[str], first: str | None, last: str) -> list[str]:
    """The turns of an ancestor (its turn ids as they started, `order`) that a fork inherited
    from `first` on (None or not one of them: from its first turn) through `last`, the root
    turn its branch point belongs to, with the subagent turns started before the root agent's
    next turn (`roots`: the root agent's turn ids): what a rewind in the fork to a message of
    `first` undoes of that ancestor."""
    if last not in order:
        return []
    start = order.index(first) if first in order else 0
    end = order.index(last) + 1
    while end < len(order) and order[end] not in roots:
        end += 1
    return order[start:end] if start < end else []
