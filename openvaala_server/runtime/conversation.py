"""A conversation loaded in the server: its metadata, its sessions, its hub.

All state changes follow the durability order: the record is written and fsynced (store), then the
in-memory state changes, then the event is published — with no `await` between the last two, so a
snapshot taken at seq N always shows exactly the events up to N.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel
import anyio.to_thread

from openvaala_server import errors
from openvaala_server.domain import meta as meta_fold
from openvaala_server.domain import records as r
from openvaala_server.domain.approvals import Grant
from openvaala_server.domain.context import carried
from openvaala_server.domain.environment import settled
from openvaala_server.domain.held_items import joined
from openvaala_server.domain.meta import ConversationMeta
from openvaala_server.domain.permission_mode import PermissionMode, allowed_modes, effective
from openvaala_server.domain.plan import Plan
from openvaala_server.domain.usage import UsageTracker
from openvaala_server.protocol import methods
from openvaala_server.runtime import context_view, contexts, surroundings, warmup
from openvaala_server.runtime.approvals import ApprovalBoard
from openvaala_server.runtime.checkpoints import Checkpoints
from openvaala_server.runtime.hub import Hub
from openvaala_server.runtime.residency import Residency
from openvaala_server.runtime.session import LiveSession
from openvaala_server.runtime.surroundings import Surroundings
from openvaala_server.structured import Activity, Job

if TYPE_CHECKING:
    from openvaala_server.protocol import payloads as p
    from openvaala_server.runtime.ports import Services

SNAPSHOT_PAGE = 100

log = logging.getLogger(__name__)

CWD_CHECK_S = 5.0  # how long a stat of the working directory may take before it counts as missing


async def directory_exists(path: str) -> bool:
    """`os.path.isdir` in a worker thread, False after `CWD_CHECK_S` without an answer (a hung
    network mount: its thread is left to finish; the event loop never waits on it)."""
    with anyio.move_on_after(CWD_CHECK_S):
        return await anyio.to_thread.run_sync(os.path.isdir, path, abandon_on_cancel=True)
    return False


@dataclass
class PendingConversation:
    """Created by a client but not yet written: it is written with its first message."""

    cwd: str
    agent: str
    model: str
    title: str | None
    created_at: str
    # Chosen before the first message: written with the conversation (`ensure_persisted`).
    permission_mode: PermissionMode | None = None


class LiveConversation:
    def __init__(self, runtime: Services, conversation_id: str, hub: Hub) -> None:
        self.runtime = runtime
        self.conversation_id = conversation_id
        self.hub = hub
        self.approvals = ApprovalBoard(hub)
        self.checkpoints = Checkpoints(self)
        self.meta: ConversationMeta | None = None
        self.pending: PendingConversation | None = None
        self.sessions: dict[str, LiveSession] = {}
        self.root_session_id = ""
        # Loads the parts of the sessions' histories that opening skipped (see `ensure_history`).
        self._history_task: Job[None] | None = None
        # Assembles the sessions' contexts for their providers after an open (runtime/warmup.py).
        self.warming: Activity | None = None
        # Lets go of the histories while nothing uses them (runtime/residency.py).
        self.residency = Residency(self)
        hub.on_unwatched = self.residency.check
        # The surroundings gathered once for the estimates of its subagents at rest, and the
        # working directory they were gathered in (`_estimate_at_rest`).
        self._shared_surroundings: Job[Surroundings] | None = None
        self._shared_cwd = ""
        # Whether the working directory was there at its last check (`check_cwd`): `info()`
        # is built for every notification and must not stat on the event loop.
        self.cwd_exists = True

    # -- identity ------------------------------------------------------------------------

    @property
    def persisted(self) -> bool:
        return self.meta is not None

    @property
    def cwd(self) -> str:
        return self.meta.cwd if self.meta else self.pending.cwd  # type: ignore[union-attr]

    @property
    def root(self) -> LiveSession:
        return self.sessions[self.root_session_id]

    def session(self, session_id: str | None) -> LiveSession:
        if session_id is None:
            return self.root
        found = self.sessions.get(session_id)
        if found is None:
            raise errors.NotFound(
                f"no session {session_id} in this conversation", param="sessionId"
            )
        return found

    @property
    def status(self) -> str:
        return self.root.status if self.sessions else "idle"

    def is_dormant(self) -> bool:
        """Nothing runs, waits or watches: safe to unload."""
        return self.hub.subscriber_count == 0 and self.is_quiet()

    def is_quiet(self) -> bool:
        """Nothing runs, waits or is being read back (clients may be watching)."""
        loading = self._history_task is not None and not self._history_task.finished
        return not loading and all(
            s.turn is None and not s.compacting and not s.inbox.waiting
            for s in self.sessions.values()
        )

    def any_turn_running(self) -> bool:
        return any(s.turn is not None for s in self.sessions.values())

    def info(self) -> p.ConversationInfo:
        root = self.root
        if self.meta is not None:
            m = self.meta
            title, cwd, agent = m.title, m.cwd, m.agent
            created, updated, archived, forked = (
                m.created_at,
                m.updated_at,
                m.archived,
                m.forked_from,
            )
        else:
            pending = self.pending
            assert pending is not None
            title, cwd, agent = pending.title or "New conversation", pending.cwd, pending.agent
            created = updated = pending.created_at
            archived, forked = False, None
        # The root agent's own, before the mode narrows them: what the mode is chosen within.
        perms = self.runtime.own_permissions_for(self, root)
        return {
            "conversationId": self.conversation_id,
            "title": title,
            "cwd": cwd,
            "agent": agent,
            "model": root.model,
            "createdAt": created,
            "updatedAt": updated,
            "archived": archived,
            "forkedFrom": forked,
            "status": self.status,
            "persisted": self.persisted,
            "rootSessionId": self.root_session_id,
            "cwdExists": self.cwd_exists,
            "modelAvailable": root.model in self.runtime.config.models,
            "agentAvailable": root.agent in self.runtime.config.agents,
            "permissionMode": effective(self.permission_mode, perms),
            "permissionModes": list(allowed_modes(perms)),
        }

    # -- building ------------------------------------------------------------------------

    def make_session(
        self,
        session_id: str,
        parent_session_id: str | None,
        agent: str,
        model: str,
        title: str,
        depth: int,
    ) -> LiveSession:
        model_config = self.runtime.config.models.get(model)
        window = model_config.context_window if model_config else 0
        max_out = model_config.max_output_tokens if model_config else 0
        session = LiveSession(
            session_id=session_id,
            parent_session_id=parent_session_id,
            agent=agent,
            model=model,
            title=title,
            usage=UsageTracker(window, max_out),
            depth=depth,
        )
        self.sessions[session_id] = session
        return session

    def read_surroundings(self) -> Surroundings:
        """What the next request says about where it runs (blocking: a worker thread)."""
        config = self.runtime.config
        where = surroundings.config_dir(config)
        hidden = surroundings.private_paths(config, self.runtime.store.data_dir.root)
        return surroundings.gather(self.cwd, config.project_docs.names, where, hidden)

    def renew_surroundings(self, session: LiveSession) -> None:
        """A turn starts: gather them again before its first model call (a read still under
        way is recent enough and is waited for)."""
        session.surroundings = None

    async def load_surroundings(self, session: LiveSession) -> None:
        """Gather the session's surroundings in a worker thread, once per turn (and again when
        the cwd changes).

        A file read or a git command on the event loop stalls every conversation while the disk
        (or a network mount) answers (docs/design.md, "Performance at scale")."""
        while session.surroundings is None:
            if not self.runtime.tasks.running:  # no runtime around it (a unit test)
                self._settle(session, await anyio.to_thread.run_sync(self.read_surroundings))
                return
            task = session.surroundings_loading
            if task is None:
                # A job of the runtime's supervisor, so shutdown waits for it (docs/design.md,
                # "Structured concurrency"); a waiter cancelled stops waiting, not the read.
                task = self.runtime.tasks.start_job(
                    partial(anyio.to_thread.run_sync, self.read_surroundings), "surroundings"
                )
                session.surroundings_loading = task
            found = await task.result()
            if session.surroundings_loading is task:  # not a read of a cwd changed meanwhile
                session.surroundings_loading = None
                self._settle(session, found)
                # Counted again at once, before any waiter goes on: a trace and the usage it
                # reports must agree (docs/protocol.md, conversation/context).
                if session.estimate_lacks_surroundings:
                    self.refresh_usage_estimate(session)
                    self.publish_usage(session)

    @staticmethod
    def _settle(session: LiveSession, found: Surroundings) -> None:
        stated = settled(session.stated_facts, found.facts)
        session.stated_facts = stated
        session.surroundings = replace(found, facts=stated)

    async def _estimate_with_surroundings(self, session: LiveSession) -> None:
        try:
            if session.paged_on_demand:
                await self._estimate_at_rest(session)
            else:
                await self.load_surroundings(session)
        except Exception:  # an estimate must never fail anything
            log.exception("gathering the session's surroundings failed")

    async def _estimate_at_rest(self, session: LiveSession) -> None:
        """The estimate of a subagent at rest, with the surroundings gathered once for all of
        them: they share the conversation's working directory, and an open of hundreds ran
        git and read the project's files once per session (docs/design.md, "Subagent
        sessions paged on demand"). A turn it starts gathers its own (`renew_surroundings`)."""
        job = self._shared_surroundings
        stale = job is not None and job.finished and (job.error or self._shared_cwd != self.cwd)
        if job is None or stale:
            self._shared_cwd = self.cwd
            job = self.runtime.tasks.start_job(
                partial(anyio.to_thread.run_sync, self.read_surroundings), "surroundings-at-rest"
            )
            self._shared_surroundings = job
        found = await job.result()
        if session.surroundings is None and session.surroundings_loading is None:
            self._settle(session, found)
            self.refresh_usage_estimate(session)
            self.publish_usage(session)

    def instructions_for(self, session: LiveSession) -> str:
        return "".join(part.text for part in context_view.instruction_parts(self, session))

    def pinned(self, session: LiveSession) -> list[str]:
        return context_view.pinned(self, session)

    def model_context(self, session: LiveSession) -> list[r.Item]:
        """The items the next request sends (see domain/context.py), computed from what was
        appended since the last time (runtime/contexts.py)."""
        return contexts.model_context(self, session)

    def refresh_usage_estimate(self, session: LiveSession) -> None:
        """A full estimate of the next request (the total of its trace, domain/trace.py): what
        usage shows until the provider reports."""
        if not session.context_ready:
            return  # counted once its context is back (`_load_history`)
        session.usage.reset_estimate(context_view.trace_of(self, session)["total"])
        session.estimate_lacks_surroundings = session.surroundings is None
        if session.surroundings is None and session.surroundings_loading is None:
            if not self.runtime.tasks.running:  # no runtime (a unit test): nothing to schedule
                return
            # Counted again (and published) once they have been gathered off the loop.
            self.runtime.tasks.spawn(
                partial(self._estimate_with_surroundings, session),
                f"estimate-{session.session_id}",
            )

    def estimate_later(self, sessions: list[LiveSession]) -> None:
        """Estimate the usage of `sessions` (closed subagent sessions: none will send another
        request) once the open that loaded them has answered, and publish it: a conversation
        with hundreds of them answered its first subscribe only after building every one's
        instructions and tools (docs/design.md, "The cold open's snapshot first")."""
        if not sessions:
            return
        if not self.runtime.tasks.running:  # no runtime (a unit test): at once
            for session in sessions:
                self.refresh_usage_estimate(session)
            return
        self.runtime.tasks.spawn(
            partial(self._estimate_each, sessions), f"estimates-{self.conversation_id}"
        )

    async def _estimate_each(self, sessions: list[LiveSession]) -> None:
        for session in sessions:
            if session.closed and session.context_ready:
                self.refresh_usage_estimate(session)
                self.publish_usage(session)
            await anyio.lowlevel.checkpoint()  # one at a time between other clients' requests

    # -- history loading -----------------------------------------------------------------

    def load_history_in_background(self, *, opening: bool = True, whole: bool = False) -> None:
        """Read back what the sessions lack: their model contexts (what a subscribed session
        holds, docs/design.md "Subscribed sessions hold their context"), or with `whole` their
        whole histories."""
        lacking = [s for s in self.sessions.values() if _lacks(s, whole)]
        if lacking:
            self._history_task = self.runtime.tasks.start_job(
                partial(self._load_history, lacking, opening, whole),
                f"history-{self.conversation_id}",
            )

    async def _load_history(self, sessions: list[LiveSession], opening: bool, whole: bool) -> None:
        # The sessions a request may come from first, then warmed up for it, then the
        # subagents at rest (hundreds, read only for their usage estimates): a first request
        # does not wait behind them for its warm-up (docs/design.md, "Subagent sessions paged on
        # demand").
        first = [s for s in sessions if not s.paged_on_demand]
        rest = [s for s in sessions if s.paged_on_demand]
        for session in first:
            await self._load_one(session, opening, whole)
        if opening:  # the first request then costs what later ones do (runtime/warmup.py)
            self.warming = self.runtime.tasks.spawn(
                partial(warmup.prepare_all, self, first), f"warmup-{self.conversation_id}"
            )
        for session in rest:
            await self._load_one(session, opening, whole)

    async def _load_one(self, session: LiveSession, opening: bool, whole: bool) -> None:
        store, cid, sid = self.runtime.store, self.conversation_id, session.session_id
        if whole:
            items, older = await self.runtime.store_call(store.read_all_items(cid, sid)), 0
        else:
            pins = self.pinned(session)
            tail = await self.runtime.store_call(store.read_context(cid, sid, pins, SNAPSHOT_PAGE))
            items, older = tail.items, tail.older
        counted = opening and session.model in self.runtime.config.models
        if counted:  # beside the loop: the estimate below only looks them up
            await anyio.to_thread.run_sync(warmup.estimate_all, items)
        session.items = joined(items, session.items)
        session.history_complete = older == 0
        session.context_held = True
        session.held_from = older
        # After a release (runtime/residency.py) the usage was kept: it may be the provider's
        # own count, better than an estimate.
        if counted:
            self.refresh_usage_estimate(session)
            self.publish_usage(session)

    async def ensure_history(self) -> None:
        """Wait until every session's whole history is in memory (a fork, a rewind, a search,
        the context trace's list of what is left out need it): read back from the journal if
        it was let go, and let go again a while after (runtime/residency.py). Raises
        `storage_failed` if it cannot be read."""
        await self._ensure(whole=True)

    async def ensure_context(self) -> None:
        """Wait until every session's model context is in memory (a model call, a usage
        estimate, a compaction need it, not what lies before it). Raises `storage_failed` if it
        cannot be read."""
        await self._ensure(whole=False)

    async def _ensure(self, *, whole: bool) -> None:
        while (task := self._history_task) is not None and not task.finished:
            await task.result()  # an open's load (contexts), or another caller's
        if not any(_lacks(s, whole) for s in self.sessions.values()):
            return
        self.load_history_in_background(opening=False, whole=whole)
        task = self._history_task
        assert task is not None
        await task.result()
        if whole:  # while subscribed: back to the contexts once nothing uses it
            self.residency.read()

    # -- durable changes -----------------------------------------------------------------

    async def ensure_persisted(self, first_text: str) -> None:
        """Write a pending conversation to disk: it is saved with its first message."""
        if self.meta is not None:
            return
        from openvaala_server.domain.title import auto_title

        p = self.pending
        assert p is not None
        root = self.root
        title = p.title or auto_title(first_text)
        created = {
            "conversationId": self.conversation_id,
            "cwd": p.cwd,
            "agent": p.agent,
            "model": root.model,
            "title": title,
            "titleSource": "user" if p.title else "auto",
            "rootSessionId": self.root_session_id,
            "forkedFrom": None,
            "formatVersion": r.FORMAT_VERSION,
        }
        if root.model_chosen:
            created["modelChosen"] = True
        self.meta = await self.runtime.store_call(self.runtime.store.create_conversation(created))
        self.pending = None
        if p.permission_mode is not None:
            await self.append_meta({"type": r.PERMISSION_MODE_SET, "mode": p.permission_mode})
        root.title = title
        self.publish_updated()

    async def append_meta(self, *payloads: r.MetadataPayload) -> list[r.Record]:
        assert self.meta is not None
        stamped = await self.runtime.store_call(
            self.runtime.store.append_metadata(self.conversation_id, [dict(p) for p in payloads])
        )
        for record in stamped:
            meta_fold.apply(self.meta, record)
        return stamped

    async def persist_items(
        self,
        session: LiveSession,
        items: list[r.Item],
        *,
        count_in_usage: bool = True,
        publish_usage: bool = True,
    ) -> None:
        if not items:
            return
        await self.save_items(session, items)
        self.publish_items(
            session, items, count_in_usage=count_in_usage, publish_usage=publish_usage
        )

    async def save_items(self, session: LiveSession, items: list[r.Item]) -> None:
        """Make items durable, telling no one yet (`publish_items` does)."""
        await self.runtime.store_call(
            self.runtime.store.append_items(self.conversation_id, session.session_id, items)
        )
        if self.meta is not None:
            self.meta.updated_at = r.utc_now()

    def publish_items(
        self,
        session: LiveSession,
        items: list[r.Item],
        *,
        count_in_usage: bool = True,
        publish_usage: bool = True,
    ) -> None:
        """Durable items into the session's history, and `item/completed` to every client."""
        turn = session.turn
        model = self.runtime.config.models.get(session.model)
        provider = model.provider if model is not None else ""
        for item in items:
            if turn is not None:
                turn.in_progress.pop(item["itemId"], None)
            session.items.append(item)
            # Only what the next request carries (domain/context.py, `carried`).
            if count_in_usage and carried(item, provider):
                session.usage.add(item)
            self.hub.publish(
                methods.ITEM_COMPLETED, {"sessionId": session.session_id, "item": item}
            )
        if publish_usage:
            self.publish_usage(session)

    async def grant(self, session: LiveSession, grants: list[Grant]) -> None:
        """Remember "allow for this conversation" answers (durable: they survive a restart)."""
        fresh = [g for g in grants if self.meta is None or g not in self.meta.grants]
        if fresh:
            await self.append_meta(*(meta_fold.grant_record(g, session.session_id) for g in fresh))

    async def set_plan(self, session: LiveSession, plan: Plan) -> None:
        """Replace the session's plan (`update_plan`): durable, then `plan/updated` to all."""
        await self.append_meta(
            {"type": r.PLAN_UPDATED, "sessionId": session.session_id, "plan": plan}
        )
        self.hub.publish(methods.PLAN_UPDATED, {"sessionId": session.session_id, "plan": plan})

    def plan_of(self, session_id: str) -> Plan | None:
        smeta = self.meta.sessions.get(session_id) if self.meta is not None else None
        return smeta.plan if smeta is not None else None

    @property
    def grants(self) -> list[Grant]:
        return self.meta.grants if self.meta is not None else []

    @property
    def permission_mode(self) -> PermissionMode | None:
        """The mode the user chose (docs/security.md, "Permission modes"); None: none."""
        if self.meta is not None:
            return self.meta.permission_mode
        return self.pending.permission_mode if self.pending is not None else None

    async def check_cwd(self) -> bool:
        """Whether the working directory exists now, remembered for `info()` (and published
        when that changed). The stat runs in a worker thread: on a hung network mount it can
        block for minutes, which on the event loop would freeze every client. A directory that
        does not answer within `CWD_CHECK_S` counts as missing (its thread is left to finish)."""
        cwd = self.cwd
        exists = await directory_exists(cwd)
        if cwd == self.cwd and exists != self.cwd_exists:
            self.cwd_exists = exists
            if self.persisted:
                self.publish_updated()
        return exists

    # -- events --------------------------------------------------------------------------

    def publish_updated(self) -> None:
        info = self.info()
        self.hub.publish(methods.CONVERSATION_UPDATED, {"conversation": info})
        self.runtime.list_feed.changed(info)

    def publish_session(self, session: LiveSession) -> None:
        self.hub.publish(methods.SESSION_UPDATED, {"session": session.to_wire()})

    def publish_usage(self, session: LiveSession) -> None:
        self.hub.publish(
            methods.USAGE_UPDATED,
            {"sessionId": session.session_id, "usage": context_view.usage_wire(self, session)},
        )

    def publish_inbox(self, session: LiveSession) -> None:
        self.hub.publish(
            methods.INBOX_UPDATED,
            {"sessionId": session.session_id, "inputs": session.inbox.to_wire()},
        )

    def _has_older(self, session: LiveSession) -> bool:
        """A fork after compaction: older root items live in the original conversation."""
        forked = self.meta.forked_from if self.meta else None
        return bool(
            session.session_id == self.root_session_id and forked and forked.get("olderHistory")
        )

    def snapshot(self) -> p.Snapshot:
        """Everything a client needs to draw the screen, consistent with `hub.seq`."""
        sessions: list[p.SessionSnapshot] = []
        for session in self.sessions.values():
            page = [] if session.paged_on_demand else session.items[-SNAPSHOT_PAGE:]
            turn = session.turn
            sessions.append(
                {
                    **session.to_wire(),
                    "items": page,
                    "hasMore": len(session.items) > len(page)
                    or not session.history_complete
                    or self._has_older(session),
                    "turn": (
                        {"turnId": turn.turn_id, "items": list(turn.in_progress.values())}
                        if turn
                        else None
                    ),
                    "inbox": session.inbox.to_wire(),
                    "usage": context_view.usage_wire(self, session),
                    "plan": self.plan_of(session.session_id),
                    "pinned": self.pinned(session),
                }
            )
        return {
            "conversation": self.info(),
            "sessions": sessions,
            "approvals": self.approvals.pending(),
        }


def _lacks(session: LiveSession, whole: bool) -> bool:
    return not (session.history_complete if whole else session.context_ready)
