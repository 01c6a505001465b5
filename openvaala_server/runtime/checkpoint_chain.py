"""The file changes a fork inherited: its parents' turns, and the snapshot stores that hold them.

A fork (or a rewind) copies its parent's history, so a rewind in the fork to a message it copied
must also undo the parent's turns from that message to the branch point (docs/design.md,
"Restoring turns a fork inherited"). Those turns' records and blobs stay in the parent's directory:
they are read from there (its `metadata.jsonl` for the order of its turns, its `checkpoints.jsonl`,
its private object store) without opening that conversation and without writing to it. A fork of
a fork walks up `forkedFrom` until the message's turn is found. Turns whose snapshots are gone (an
ancestor deleted or not imported, or its snapshots dropped to stay within its bound) are listed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openvaala_server import errors
from openvaala_server.domain import checkpoints as ck
from openvaala_server.domain import records as r

if TYPE_CHECKING:
    from openvaala_server.domain.meta import ConversationMeta
    from openvaala_server.runtime.ports import Conversation, Storage
    from openvaala_server.store.checkpoints import SnapshotStore


@dataclass
class Inherited:
    """The ancestors' turns to undo, oldest first, each with the store holding its blobs."""

    turns: list[tuple[ck.TurnFiles, SnapshotStore]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # turn ids whose snapshots are gone
    owners: dict[str, str] = field(default_factory=dict)  # turn id → the ancestor that ran it


def inherited_turn_ids(items: list[r.Item], turn_id: str | None, own: set[str]) -> list[str]:
    """The turns of the fork's copied history from the first item of `turn_id` on (None: from
    the start) that are not its own (`own`), in history order: the root turns of its ancestors
    a rewind there undoes."""
    found: list[str] = []
    started = turn_id is None
    for item in items:
        tid = item.get("turnId")
        started = started or tid == turn_id
        if started and isinstance(tid, str) and tid not in own and tid not in found:
            found.append(tid)
    return found


async def inherited(
    conv: Conversation, turn_id: str | None, store_of: Callable[[str], SnapshotStore]
) -> Inherited:
    """What a rewind of `conv` to a message of `turn_id`, a turn it copied, undoes of its
    ancestors (None: every turn it copied, as `conversation/checkpoints` lists them;
    `store_of`: an ancestor's snapshot store, opened to read only). The root's history must be
    loaded."""
    meta = conv.meta
    if meta is None:
        return Inherited()
    wanted = inherited_turn_ids(conv.root.items, turn_id, set(meta.turns))
    levels: list[list[tuple[ck.TurnFiles, SnapshotStore]]] = []
    found = Inherited()
    remaining = set(wanted)
    seen = {conv.conversation_id}
    child = meta
    while remaining and (up := await _parent(conv.runtime, child, seen)) is not None:
        parent_id, parent = up
        ran = [t for t in wanted if t in parent.turns]
        if ran:
            span = _span(parent, turn_id, ran[-1])
            records = await conv.runtime.store_call(conv.runtime.store.read_checkpoints(parent_id))
            levels.append(_level(records, span, store_of(parent_id)))
            pruned = ck.ids_of(records, ck.FILES_PRUNED)
            found.missing += [t for t in span if t in pruned]
            found.owners.update((t, parent_id) for t in span)
            remaining -= set(ran)
        child = parent
    found.missing += [t for t in wanted if t in remaining]
    found.turns = [turn for level in reversed(levels) for turn in level]
    return found


async def _parent(
    runtime: Storage, child: ConversationMeta, seen: set[str]
) -> tuple[str, ConversationMeta] | None:
    """The conversation `child` was forked from, once (None: none, already seen, or not
    readable: unreadable, or written by a newer version, is as if not here)."""
    if not child.forked_from:
        return None
    parent_id = str(child.forked_from.get("conversationId"))
    if parent_id in seen:
        return None
    seen.add(parent_id)
    try:
        parent = await runtime.store_call(runtime.store.load_meta(parent_id))
    except (errors.OpenVaalaError, OSError):
        return None
    return (parent_id, parent) if parent is not None else None


def _span(parent: ConversationMeta, turn_id: str | None, last: str) -> list[str]:
    """The parent's root turns a rewind to `turn_id` undoes, up to `last` (the branch point)."""
    roots = {t.turn_id for t in parent.turns.values() if t.session_id == parent.root_session_id}
    return ck.ancestor_span(list(parent.turns), roots, turn_id, last)


def _level(
    records: list[r.Record], span: list[str], source: SnapshotStore
) -> list[tuple[ck.TurnFiles, SnapshotStore]]:
    """The turns of `span` that changed files, as the parent's checkpoints record them. The
    parent's own restores are not the fork's: a file the parent put back since is already as it
    was (skipped) or was changed again (a conflict)."""
    folded = ck.fold(records)
    return [
        (folded[t], source) for t in span if t in folded and (folded[t].files or folded[t].skipped)
    ]
