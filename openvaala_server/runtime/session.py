"""One agent's live state in memory: its history, its inbox, its running turn, its usage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from openvaala_server.domain.context import SinceSummary
from openvaala_server.domain.inbox import Inbox
from openvaala_server.domain.positions import PositionIndex
from openvaala_server.domain.records import Item
from openvaala_server.domain.status import (
    LastStatus,
    SessionStatus,
    StopReason,
    TurnStatus,
    session_status,
)
from openvaala_server.domain.usage import UsageTracker
from openvaala_server.protocol import payloads as wire
from openvaala_server.structured import Activity, Job

if TYPE_CHECKING:
    from openvaala_server.config import Config
    from openvaala_server.domain.compaction_policy import Prepared
    from openvaala_server.domain.environment import Facts
    from openvaala_server.runtime.surroundings import Surroundings


@dataclass
class LiveTurn:
    turn_id: str
    status: TurnStatus = "running"  # ends once (domain/status.end_turn)
    # The turn's runner, an activity of the runtime's supervisor (structured.py): shutdown waits
    # for it, bounded; an interrupt cancels `interrupt_scope` inside it instead, so that the
    # turn still writes its end (docs/design.md, "Structured concurrency").
    task: Activity | None = None
    interrupt_scope: anyio.CancelScope | None = None
    # Items being streamed, by id, in creation order: what a snapshot shows as "in progress".
    in_progress: dict[str, Item] = field(default_factory=dict)
    # Why the turn is being stopped (None while it runs on).
    stop_reason: StopReason | None = None
    # Why the provider ended the turn's last model call ("stop", "max_tokens",
    # "content_filter", ...): `turn/ended.modelStop`, which editors map to their stop reasons.
    model_stop: str | None = None
    # Set by the runner's first step; an interrupt before it is seen by the runner's loop.
    started: bool = False
    # Set once `turn/started` is out (after its record and its inputs are durable), or once the
    # turn is over without it: `input/send` answers "started" only then, so no client sees the
    # answer first.
    announced: anyio.Event = field(default_factory=anyio.Event)
    # Started by an `input/send` that waits for it: inputs it cannot save are that request's
    # again (it fails with `refused`), not put back in the waiting list (docs/protocol.md).
    by_request: bool = False
    # Its inputs are durable (and `turn/started` is about to go out).
    saved: bool = False
    # Why a turn `by_request` ended before its inputs were saved: what the request fails with.
    refused: Exception | None = None
    # Approvals this turn waits for (its session's status is then "awaiting_approval").
    awaiting_approval: int = 0
    # The configuration when the turn started: a reload meanwhile applies from the next turn.
    config: Config | None = None


@dataclass
class LiveSession:
    session_id: str
    parent_session_id: str | None
    agent: str
    model: str
    title: str
    usage: UsageTracker
    items: list[Item] = field(default_factory=list)
    # Where each of `items` is by id, for paging (conversation/read with beforeItem).
    positions: PositionIndex = field(default_factory=PositionIndex)
    # False while only the last page is loaded (a conversation just opened from disk).
    history_complete: bool = True
    # `items`, a tail of the history, holds the model's context (domain/context_tail.py): what
    # a subscribed session keeps (docs/design.md, "Subscribed sessions hold their context").
    context_held: bool = False
    # How many items of the history come before `items` (0 while it is whole, or not known).
    held_from: int = 0
    # The context's figures after its summary, taken as it was let go to its last page (nothing
    # runs until it is read back): the gauge reads them meanwhile (runtime/context_view.py).
    released_figures: SinceSummary | None = None
    inbox: Inbox = field(default_factory=Inbox)
    turn: LiveTurn | None = None
    last_status: LastStatus = "idle"  # of the last finished turn
    closed: bool = False
    # The user chose `model` (not the agent's): an agent switch keeps it (domain/meta.py).
    model_chosen: bool = False
    depth: int = 0  # 0 for the root agent, 1 for its subagents, …
    # What the requests say about where they run (runtime/surroundings.py); None: to be
    # gathered (conversation.load_surroundings), at the start of each turn again.
    surroundings: Surroundings | None = None
    surroundings_loading: Job[Surroundings] | None = None
    estimate_lacks_surroundings: bool = False  # the usage estimate was made before they were read
    # The environment facts the last requests stated: kept while only the git status changed
    # (domain/environment.settled).
    stated_facts: Facts | None = None
    # The reasoning mode the provider said it applied (openai_responses): all_turns | current_turn.
    reasoning_context: str | None = None
    # A manual compaction is running: input waits as if a turn ran.
    compacting: bool = False
    compaction_task: Activity | None = None
    # Early compaction (runtime/early.py): a summary prepared in the background while the session
    # waits for the user, and the task preparing it.
    prepared: Prepared | None = None
    preparing: Activity | None = None

    @property
    def paged_on_demand(self) -> bool:
        """A subagent session at rest (closed, or its last turn over and nothing waiting): a
        snapshot carries none of its items, a client that shows it pages them in
        (docs/protocol.md, "Snapshot"; docs/design.md, "Subagent sessions paged on demand")."""
        return (
            self.parent_session_id is not None
            and self.turn is None
            and not self.compacting
            and not self.inbox.waiting
        )

    @property
    def context_ready(self) -> bool:
        """What the next model call sends is in memory (the whole history, or its context)."""
        return self.history_complete or self.context_held

    def interrupt(self) -> None:
        """Cancel the running turn's interrupt scope (its runner then writes it as interrupted)."""
        if self.turn is not None and self.turn.interrupt_scope is not None:
            self.turn.interrupt_scope.cancel()

    @property
    def status(self) -> SessionStatus:
        return session_status(
            closed=self.closed,
            awaiting_approval=self.turn is not None and self.turn.awaiting_approval > 0,
            running=self.turn is not None or self.compacting,
            waiting=bool(self.inbox.waiting),
            last=self.last_status,
        )

    def to_wire(self) -> wire.SessionInfo:
        return {
            "sessionId": self.session_id,
            "parentSessionId": self.parent_session_id,
            "agent": self.agent,
            "model": self.model,
            "modelChosen": self.model_chosen,
            "status": self.status,
            "title": self.title,
            "depth": self.depth,
        }
