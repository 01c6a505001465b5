"""A conversation's checkpoints: capture around each tool call that changes files, and restore.

Before a call that states the files it writes (write_file, edit_file, apply_patch), their content
is stored; before a `shell` call, the whole working directory is snapshot, and again after it.
What changed goes to `checkpoints.jsonl` as one durable `files_changed` record per call, so a crash
mid-turn loses nothing already changed. Undo and rewind restore from there
(domain/checkpoints.py decides what, and which paths conflict with edits made since).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from openvaala_server import errors
from openvaala_server.domain import checkpoints as ck
from openvaala_server.mcp.manager import as_mcp_tool
from openvaala_server.runtime.checkpoint_chain import inherited
from openvaala_server.runtime.checkpoint_survey import Survey, SurveyState
from openvaala_server.store.checkpoints import (
    SnapshotError,
    SnapshotStore,
    SnapshotTimeout,
    TooLarge,
    watched_changes,
)
from openvaala_server.store.tree_watch import Changed, TreeWatch
from openvaala_server.structured import ActivityCancelled, Job
from openvaala_server.tools.base import HeldChange, access_of

if TYPE_CHECKING:
    from openvaala_server.protocol.payloads import (
        CheckpointsResult,
        CheckpointTurn,
        RestoreResult,
    )
    from openvaala_server.runtime.ports import Conversation
    from openvaala_server.runtime.session import LiveSession
    from openvaala_server.tools.base import Tool

log = logging.getLogger(__name__)
MB = 1024 * 1024


@dataclass
class Capture:
    """What was recorded before one call: the named files' states, or a whole-tree snapshot."""

    turn_id: str
    session_id: str
    store: SnapshotStore
    before: dict[str, ck.State]
    tree: str | None = None
    skipped: dict[str, str] = field(default_factory=dict)  # path → why it is not captured


class Checkpoints:
    def __init__(self, conv: Conversation) -> None:
        self.conv = conv
        self._git = anyio.Lock()  # one git command at a time on the shared private index
        self._turns: dict[str, ck.TurnFiles] | None = None
        # Turn ids this conversation's journal says were restored (its parents' turns too) or
        # pruned: known once `turns()` has read the journal.
        self._restored: set[str] = set()
        self._pruned: set[str] = set()
        self._bytes: int | None = None
        self.skipped: list[str] = []  # why something was not captured (reported)
        # False once a whole-tree snapshot timed out: `shell` calls are then not captured (until
        # the conversation is loaded again), and reported so.
        self._whole_tree = True
        self._survey = Survey(self._too_large)
        self._shell_seen = False  # a `shell` call ran: later turns snapshot as they start
        # The snapshot each session's running turn started with: session id → (turn, task).
        self._turn_trees: dict[str, tuple[str, Job[str | None]]] = {}
        # What changed in the working directory since the private index was last brought up
        # to date (store/tree_watch.py): git is asked about those paths only, not the tree.
        self._watch: TreeWatch | None = None

    @property
    def _config(self) -> Any:
        return self.conv.runtime.config.checkpoints

    def _store(self, conversation_id: str | None = None) -> SnapshotStore:
        """This conversation's snapshot store, or an ancestor's (`conversation_id`: only read,
        for a restore of turns this one inherited)."""
        runtime = self.conv.runtime
        cwd = Path(self.conv.cwd).resolve()
        excludes: list[str] = []
        data_root = runtime.store.data_dir.root.resolve()
        if data_root.is_relative_to(cwd) and data_root != cwd:
            excludes.append(str(data_root.relative_to(cwd)))
        return SnapshotStore(
            runtime.store.data_dir.conversation_dir(conversation_id or self.conv.conversation_id),
            cwd,
            excludes=tuple(excludes),
            max_file_bytes=self._config.max_file_mb * MB,
            timeout_s=self._config.snapshot_timeout_s,
        )

    def own_store(self) -> SnapshotStore:
        """This conversation's snapshot store (runtime/worktree_diff.py reads its blobs)."""
        return self._store()

    async def turns(self) -> dict[str, ck.TurnFiles]:
        if self._turns is None:
            records = await self.conv.runtime.store_call(
                self.conv.runtime.store.read_checkpoints(self.conv.conversation_id)
            )
            self._turns = ck.fold(records)
            self._restored = ck.ids_of(records, ck.FILES_RESTORED)
            self._pruned = ck.ids_of(records, ck.FILES_PRUNED) - self._restored
        return self._turns

    def turn_started(self, session: LiveSession, turn_id: str) -> None:
        """Snapshot the whole working directory as the turn starts, in the background: it
        overlaps the model's first call, and a `shell` call of this turn compares with it
        instead of scanning the tree once more before it runs (as OpenCode and Claude Code
        take their snapshot at the prompt). Only for agents that have `shell` or an MCP
        server, in a conversation that has run one of those."""
        self._turn_trees.pop(session.session_id, None)
        if not self._config.enabled or self.conv.meta is None:
            return
        agent = self.conv.runtime.config.agents.get(session.agent)
        if agent is None or not self._whole_tree:
            return
        if not any(t == "shell" or t.startswith("mcp:") for t in agent.tools):
            return  # nothing it can call changes unnamed files
        if not self._shell_seen:
            # A conversation that has not run `shell` (since it was loaded) pays nothing: its
            # first `shell` call snapshots just before it runs instead.
            return
        store = self._store()

        async def snapshot() -> str | None:
            async with self._git:
                try:
                    return await self._whole_snapshot(store, None)
                except (SnapshotError, OSError) as exc:
                    self._skip(f"snapshot at the turn's start: {exc}", exc)
                    return None

        tasks = self.conv.runtime.tasks
        if not tasks.running:  # no runtime around it (a unit test): the first call snapshots
            return
        # A job of the runtime's supervisor: shutdown waits for it (docs/design.md, "Structured
        # concurrency"); a turn interrupted while waiting for it stops waiting, not git.
        job = tasks.start_job(snapshot, f"snapshot-{turn_id}")
        self._turn_trees[session.session_id] = (turn_id, job)

    async def _whole_snapshot(self, store: SnapshotStore, wait_s: float | None) -> str | None:
        """A snapshot of the whole tree (the caller holds the git lock), or None when the
        directory is too large, or its survey is not done after `wait_s` (None: no limit).
        Surveyed once per load, before anything is stored: a home directory or a disk's root
        must not be copied into the conversation."""
        limits = (self._config.max_files, self._config.max_mb * MB)
        state = await self._survey.outcome(store, limits, self.conv.runtime.tasks, wait_s)
        if state is SurveyState.RUNNING:
            if wait_s is not None:  # (None: its job was cancelled, the daemon is stopping)
                self._skip(
                    f"not captured: the survey of {store.work_tree} was not done within "
                    f"{wait_s:g} s ([checkpoints] survey_wait_s); it goes on for the calls after "
                    "this one"
                )
            return None
        if not self._whole_tree:
            return None
        changed = await self._changed(store)
        try:
            return await store.snapshot(changed)
        except BaseException:  # what was taken may not be in the index
            self._index_dropped()
            raise

    async def _changed(self, store: SnapshotStore) -> Changed | None:
        """The paths changed since the private index was last updated, None when not known
        (the first time, or without a file watch). The caller holds the git lock and brings
        the index up to date right after."""
        watch = self._watch
        if watch is not None and watch.root != store.work_tree:  # the conversation moved
            watch.close()
            watch = self._watch = None
        if watch is None:
            # Placed before the scan that follows (`take` says "scan all" this first time), so
            # that nothing changed during it is missed.
            ignored = await store.ignored_dirs()
            watch = TreeWatch(store.work_tree, ignored=ignored, skip=store.excludes)
            await asyncio.to_thread(watch.start)
            self._watch = watch
        return await asyncio.to_thread(watch.take)

    async def _shell_changes(
        self, store: SnapshotStore, tree: str
    ) -> list[tuple[str, ck.State, ck.State]]:
        """What differs from `tree` now, after a `shell` call (the caller holds the git lock)."""
        changed = await self._changed(store)
        if changed is None or self._watch is None:
            return await store.changes_since(tree)
        return await watched_changes(store, self._watch, tree, changed)

    def _index_dropped(self) -> None:
        if self._watch is not None:
            self._watch.forget()

    async def _turn_tree(self, session_id: str, turn_id: str) -> str | None:
        started = self._turn_trees.get(session_id)
        if started is None or started[0] != turn_id:
            return None
        # Only the wait is cancelled by an interrupt: git is not killed half-way through the index.
        try:
            return await started[1].result()
        except ActivityCancelled:  # shutdown came first
            return None

    # -- around a tool call --------------------------------------------------------------

    async def before_call(
        self, session: LiveSession, turn_id: str, tool: Tool, arguments: dict[str, Any]
    ) -> Capture | None:
        if not self._config.enabled or self.conv.meta is None:
            return None
        store = self._store()
        try:
            access = access_of(tool, arguments, store.work_tree)
        except Exception:  # a call the tool itself will refuse: nothing to capture
            return None
        capture = Capture(turn_id, session.session_id, store, {})
        try:
            if access.writes:
                paths = [p for p in (_inside(w, store.work_tree) for w in access.writes) if p]
                if not paths:
                    return None
                # No lock: objects are written atomically, and git's index is not touched.
                capture.before, capture.skipped = await asyncio.to_thread(_capture, store, paths)
            elif access.command is not None or as_mcp_tool(tool) is not None:
                # An MCP server can change any file too (nothing says which): captured as
                # `shell` is, which the file watch makes cheap after the first snapshot.
                self._shell_seen = True
                capture.tree = await self._turn_tree(session.session_id, turn_id)
                if not self._whole_tree:
                    self._skip(f"{tool.spec.name}: the working directory is too large to snapshot")
                    return None
                if capture.tree is None:
                    async with self._git:
                        capture.tree = await self._whole_snapshot(store, self._config.survey_wait_s)
                    if capture.tree is None:
                        return None
            else:
                return None
        except (SnapshotError, OSError) as exc:
            self._skip(f"{tool.spec.name}: {exc}", exc)
            return None
        return capture

    async def after_call(self, capture: Capture, held: tuple[HeldChange, ...] = ()) -> None:
        """Record what the call changed: on disk, or `held` (the call changed the files in the
        editor that holds them, and the disk does not show it)."""
        store = capture.store
        skipped = dict(capture.skipped)
        try:
            in_editor = await asyncio.to_thread(_held_changes, store, held, capture.before)
            if capture.tree is not None:
                async with self._git:
                    diff = await self._shell_changes(store, capture.tree)
                changes = await asyncio.to_thread(_kept, store, diff, skipped)
            else:
                # The rest on disk (a patch's delete beside its edits in the editor).
                rest = [p for p in capture.before if p not in {c.path for c in in_editor}]
                after, skipped_after = await asyncio.to_thread(_capture, store, rest)
                skipped.update(skipped_after)
                changes = [
                    ck.FileChange(p, capture.before[p], after[p])
                    for p in rest
                    if p not in skipped and capture.before[p] != after[p]
                ]
            changes = in_editor + changes
        except (SnapshotError, OSError) as exc:
            self._skip(str(exc), exc)
            return
        if not changes and not skipped:
            return
        for path in skipped:
            self._skip(
                f"{path}: larger than [checkpoints] max_file_mb ({self._config.max_file_mb} MB): "
                "a restore leaves it as it is"
            )
        record = ck.changed_record(capture.turn_id, capture.session_id, changes, skipped)
        await self.conv.runtime.store_call(
            self.conv.runtime.store.append_checkpoints(self.conv.conversation_id, [record])
        )
        turns = await self.turns()
        turns.setdefault(capture.turn_id, ck.TurnFiles(capture.turn_id, capture.session_id)).add(
            changes, skipped
        )
        await self._bound(store, changes)

    def _too_large(self, why: str) -> None:
        self._whole_tree = False
        self._skip(f"shell calls are not captured: {why}")

    def _skip(self, why: str, exc: Exception | None = None) -> None:
        if isinstance(exc, SnapshotTimeout):
            # Too large a directory: scanning it at every turn would only waste time.
            self._whole_tree = False
        log.warning("checkpoint of %s skipped: %s", self.conv.conversation_id, why)
        self.skipped = [*self.skipped[-19:], why]

    async def _bound(self, store: SnapshotStore, changes: list[ck.FileChange]) -> None:
        """Keep the store under `max_mb`: drop the oldest turns' snapshots first.

        The store is measured (a walk of its objects) when first needed and again once the
        estimate passes half the bound; in between each change adds its file's size, an upper
        bound of its compressed object."""
        limit = self._config.max_mb * MB
        if self._bytes is None or self._bytes > limit // 2:
            self._bytes = await asyncio.to_thread(store.size_bytes)
        else:
            self._bytes += await asyncio.to_thread(_sizes, store, changes)
        turns = await self.turns()
        while self._bytes > limit and turns:
            oldest = next(iter(turns))
            await self.conv.runtime.store_call(
                self.conv.runtime.store.append_checkpoints(
                    self.conv.conversation_id, [ck.pruned_record([oldest])]
                )
            )
            if not turns[oldest].restored:
                self._pruned.add(oldest)  # its files can no longer be put back: reported
            del turns[oldest]
            async with self._git:
                await asyncio.to_thread(store.gc, ck.blobs_of(turns.values()))
                self._index_dropped()
                self._bytes = await asyncio.to_thread(store.size_bytes)
            log.info("checkpoints of turn %s dropped: the store is over its bound", oldest)

    # -- restore -------------------------------------------------------------------------

    def _order(self) -> list[str]:
        return list(self.conv.meta.turns) if self.conv.meta else []

    async def undo_last(self, force: bool) -> RestoreResult:
        """Undo this conversation's last turn not undone yet. A fork's undo stops at its own
        first turn: the turns it copied from its parent are undone by a rewind to one of their
        messages (docs/design.md, "Restoring turns a fork inherited")."""
        turns = ck.undoable(await self.turns(), self._order())
        if not turns:
            raise errors.NotFound("no turn of this conversation with file changes left to undo")
        own = self._store()
        return await self._restore([(t, own) for t in turns[-1:]], force, [])

    async def restore_since(self, turn_id: str | None, force: bool) -> RestoreResult:
        """Undo every turn from `turn_id` on. When `turn_id` is a turn this conversation copied
        from the one it was forked from, that is every turn of its own and its ancestors' turns
        from `turn_id` to the branch point, read from their directories."""
        order = self._order()
        own_turns = await self.turns()
        own = self._store()
        if turn_id is None or turn_id in order:
            later = order[order.index(turn_id) :] if turn_id is not None else order
            picked = {*later}
            turns = [(t, own) for t in ck.undoable(own_turns, order) if t.turn_id in picked]
            return await self._restore(turns, force, [t for t in later if t in self._pruned])
        chain = await inherited(self.conv, turn_id, self._store)
        turns = [(t, s) for t, s in chain.turns if t.turn_id not in self._restored]
        turns += [(t, own) for t in ck.undoable(own_turns, order)]
        missing = [t for t in chain.missing if t not in self._restored]
        missing += [t for t in order if t in self._pruned]
        return await self._restore(turns, force, missing)

    async def _restore(
        self, turns: list[tuple[ck.TurnFiles, SnapshotStore]], force: bool, missing: list[str]
    ) -> RestoreResult:
        """Undo `turns` (oldest first; each with the store holding its blobs). `missing`: the
        turns in the range whose snapshots are gone, reported with the result."""
        result: RestoreResult = {"restored": [], "conflicts": [], "turnIds": []}
        if missing:
            result["missingTurnIds"] = missing
        if not turns:
            return result
        store = self._store()
        source_of = {t.turn_id: s for t, s in turns}
        paths = sorted({p for t, _s in turns for p in t.files})
        async with self._git:
            try:
                current = await asyncio.to_thread(_states, store, paths, False)
            except (SnapshotError, OSError) as exc:
                raise errors.StorageFailed(f"could not read the files to restore: {exc}") from None
            plan = ck.plan_restore([t for t, _s in turns], current)
            plan, refused = _without_refused(plan)
            if plan.conflicts and not force:
                names = ", ".join(c["path"] for c in plan.conflicts[:5])
                raise errors.FilesConflict(
                    f"{len(plan.conflicts)} file(s) changed since the agent wrote them ({names}): "
                    "nothing was restored; repeat with force to overwrite them",
                    conflicts=plan.conflicts,
                )
            sources = {p: source_of[plan.sources[p]] for p in plan.targets}
            try:
                await asyncio.to_thread(_put_back, store, plan.targets, sources)
            except (SnapshotError, OSError) as exc:
                raise errors.StorageFailed(f"could not restore the files: {exc}") from None
        # Recorded in this conversation's journal only, even for turns its parent ran: the
        # parent's directory is never written to (and its own history never undid them).
        await self.conv.runtime.store_call(
            self.conv.runtime.store.append_checkpoints(
                self.conv.conversation_id,
                [ck.restored_record(plan.turn_ids, sorted(plan.targets))],
            )
        )
        for turn, _source in turns:
            turn.restored = True
        self._restored.update(plan.turn_ids)
        result["restored"] = sorted(plan.targets)
        if refused:
            result["refusedPaths"] = refused
        result["conflicts"] = plan.conflicts
        result["turnIds"] = plan.turn_ids
        if plan.skipped:
            result["skipped"] = plan.skipped
        return result

    async def report(self) -> CheckpointsResult:
        turns = await self.turns()
        store = self._store()
        size = await asyncio.to_thread(store.size_bytes) if store.git_dir.exists() else 0
        self._bytes = size
        listed: list[CheckpointTurn] = []
        if self.conv.meta is not None and self.conv.meta.forked_from:
            # The turns a fork copied come first, marked with the ancestor that ran them: a
            # rewind to one of their messages restores them too, and clients ask about the
            # files it would restore from this list (docs/protocol.md).
            await self.conv.ensure_history()
            chain = await inherited(self.conv, None, self._store)
            listed += [
                _reported(t, t.turn_id in self._restored, chain.owners[t.turn_id])
                for t, _store in chain.turns
            ]
        own = ck.undoable(turns, self._order()) + [t for t in turns.values() if t.restored]
        listed += [_reported(t, t.restored) for t in own]
        return {
            "enabled": bool(self._config.enabled),
            "bytes": size,
            "limitBytes": self._config.max_mb * MB,
            "skipped": list(self.skipped),
            "turns": listed,
        }


def _reported(turn: ck.TurnFiles, restored: bool, owner: str | None = None) -> CheckpointTurn:
    reported: CheckpointTurn = {
        "turnId": turn.turn_id,
        "sessionId": turn.session_id,
        "restored": restored,
        "files": [{"path": c.path, "change": ck.change_kind(c)} for c in turn.files.values()],
    }
    if turn.skipped:
        reported["skipped"] = turn.skipped_list()
    if owner is not None:
        reported["fromConversationId"] = owner
    return reported


def _inside(path: Path, root: Path) -> str | None:
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return None
    if rel.startswith("..") or os.path.isabs(rel) or rel == ".":
        return None
    return rel.replace(os.sep, "/")


def _states(store: SnapshotStore, paths: list[str], keep: bool = True) -> dict[str, ck.State]:
    if keep:
        store.ensure()
    return {p: store.state(p, store=keep) for p in paths}


def _capture(store: SnapshotStore, paths: list[str]) -> tuple[dict[str, ck.State], dict[str, str]]:
    """The paths' states, stored; and the paths too large to store (path → reason)."""
    store.ensure()
    states: dict[str, ck.State] = {}
    skipped: dict[str, str] = {}
    for path in paths:
        try:
            states[path] = store.state(path, store=True)
        except TooLarge:
            skipped[path] = ck.TOO_LARGE
    return states, skipped


def _held_changes(
    store: SnapshotStore, held: tuple[HeldChange, ...], before: dict[str, ck.State]
) -> list[ck.FileChange]:
    """The texts an editor had before and after the call, stored as the file's versions (its
    mode kept from the disk)."""
    changes: list[ck.FileChange] = []
    for change in held:
        rel = _inside(change.path, store.work_tree)
        if rel is None or change.old == change.new:
            continue
        on_disk = before.get(rel)
        mode = on_disk.mode if on_disk is not None else ck.FILE_MODE
        old = None if change.old is None else store.stored(change.old.encode("utf-8"), mode)
        changes.append(ck.FileChange(rel, old, store.stored(change.new.encode("utf-8"), mode)))
    return changes


def _kept(
    store: SnapshotStore, diff: list[tuple[str, ck.State, ck.State]], skipped: dict[str, str]
) -> list[ck.FileChange]:
    """The changes a whole-tree comparison found that the store keeps; the others (a file over
    `max_file_mb` before or after) go into `skipped`."""
    kept: list[ck.FileChange] = []
    for path, before, after in diff:
        if before == after:
            continue
        if store.too_large(path, before, after):
            skipped[path] = ck.TOO_LARGE
        else:
            kept.append(ck.FileChange(path, before, after))
    return kept


def _sizes(store: SnapshotStore, changes: list[ck.FileChange]) -> int:
    total = 0
    for change in changes:
        with contextlib.suppress(OSError):
            total += os.lstat(store.work_tree / change.path).st_size
    return total


def _without_refused(plan: ck.RestorePlan) -> tuple[ck.RestorePlan, list[str]]:
    """The plan less the paths no restore may write (`ck.never_restored`), and those paths."""
    refused = sorted(p for p, t in plan.targets.items() if ck.never_restored(p, t))
    if not refused:
        return plan, []
    targets = {p: t for p, t in plan.targets.items() if p not in refused}
    conflicts = [c for c in plan.conflicts if c["path"] not in refused]
    sources = {p: plan.sources[p] for p in targets}
    return ck.RestorePlan(targets, conflicts, plan.turn_ids, sources), refused


def _put_back(
    store: SnapshotStore, targets: dict[str, ck.State], sources: dict[str, SnapshotStore]
) -> None:
    # Every blob is looked for first, so that a snapshot gone from a parent's store (removed
    # by hand, a partial copy) writes nothing rather than half of the files.
    gone = [p for p, t in targets.items() if t is not None and not sources[p].has_blob(t.sha)]
    if gone:
        raise SnapshotError(f"the snapshots of {', '.join(gone[:5])} are no longer stored")
    for path, target in targets.items():
        store.put_back(path, target, sources[path])
