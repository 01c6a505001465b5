"""`conversation/diff`: the conversation's change to its working directory, file by file, from
the state its checkpoints recorded before its first change to each file, to the file as it is
now (domain/worktree_diff.py). Reading files and blobs runs in a worker thread."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING

from openvaala_server.domain import checkpoints as ck
from openvaala_server.domain.diffs import ChangeKind, FileDiff, binary_diff, bounded, file_diff
from openvaala_server.domain.worktree_diff import baseline
from openvaala_server.store.checkpoints import SnapshotError, SnapshotStore

if TYPE_CHECKING:
    from openvaala_server.protocol.payloads import DiffResult
    from openvaala_server.runtime.conversation import LiveConversation


async def conversation_diff(conv: LiveConversation) -> DiffResult:
    if conv.meta is None:  # not saved yet: no turn has run
        return {"files": []}
    await conv.ensure_history()
    turns = await conv.checkpoints.turns()
    order = list(conv.meta.turns)
    base = baseline(ck.undoable(turns, order))
    store = conv.checkpoints.own_store()
    files = await asyncio.to_thread(_diffs, store, base.before, base.skipped)
    result: DiffResult = {"files": bounded(files)}
    if base.skipped:
        result["skipped"] = [{"path": p, "reason": r} for p, r in sorted(base.skipped.items())]
    return result


def _diffs(
    store: SnapshotStore, before: dict[str, ck.State], skipped: dict[str, str]
) -> list[FileDiff]:
    """Each changed file's diff; a file now too large, or reached through a link out of the
    working directory, goes to `skipped` instead, never read (a grown log would be read whole,
    a folder swapped for a link would show a file elsewhere)."""
    out: list[FileDiff] = []
    root = store.work_tree.resolve()
    for path in sorted(before):
        then = before[path]
        try:
            if not (store.work_tree / path).parent.resolve().is_relative_to(root):
                skipped[path] = "its folder now leads outside the working directory"
                continue
            now = store.state(path, store=False)
            if now == then:
                continue  # as it was before the conversation changed it
            if now is not None and now.mode != ck.LINK_MODE:
                size = os.lstat(store.work_tree / path).st_size
                if size > store.max_file_bytes:
                    skipped[path] = (
                        f"larger than the checkpoint limit of {store.max_file_bytes} bytes now"
                    )
                    continue
            old = store.read_blob(then.sha) if then is not None else None
            new = _current(store.work_tree / path, now)
        except (SnapshotError, OSError, ValueError):
            continue  # gone from the store, or unreadable now: nothing to compare
        out.append(_change(path, old, new))
    return out


def _current(path: Path, state: ck.State) -> bytes | None:
    if state is None:
        return None
    if state.mode == ck.LINK_MODE:  # a link's content is where it points
        return os.fsencode(os.readlink(path))
    return path.read_bytes()


def _change(path: str, old: bytes | None, new: bytes | None) -> FileDiff:
    kind: ChangeKind = "add" if old is None else "delete" if new is None else "update"
    try:
        return file_diff(_text(old), _text(new), path)
    except UnicodeDecodeError:
        return binary_diff(path, kind)


def _text(data: bytes | None) -> str | None:
    return data.decode("utf-8") if data is not None else None
