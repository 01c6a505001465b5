"""The one fold of a conversation's event stream: a snapshot plus the notifications after it.

Both Python clients draw from it: the terminal UI (openvaala_tui) and the editor bridge
(openvaala_lsp); the web client folds the same stream in `state.js`, and a test feeds both folds
the same recorded streams (tests/client/streams/) and compares the views.

`ConversationView.apply(note)` takes one notification exactly as the client yields it
(`{"method", "params"}`; `fold(method, params)` is the same with the parts apart) and returns the
`Change`s a screen must draw. `version` goes up with every change, so a client that renders whole
documents (the editor bridge) knows when to redraw. Nothing here touches a toolkit or the
network, so every rule is tested without a UI. It is a cache of the daemon's state, rebuilt from
a fresh snapshot whenever the daemon sends one; a client never decides anything from it.

Items are kept per session, in order, keyed by `itemId`; an item streamed with `item/delta` is
updated in place and replaced whole by `item/completed`. A session keeps at most `ITEM_BUDGET`
items in memory: older ones are dropped and paged in again with `conversation/read`.

Pending approvals (docs/protocol.md, `approval/requested`) are kept for the whole conversation, in
the order they were asked: the user answers them one after another, whichever agent asked.
When one is resolved, and when a turn fails without the daemon's notice saying why, the view
adds a local notice item (id prefix `local-`) unless made with `local_notices=False` (the editor
bridge shows pending approvals in its own section instead).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from openvaala_server.client.cut_stream import keep_cut_stream
from openvaala_server.protocol import methods
from openvaala_server.protocol.json_types import JsonObject

if TYPE_CHECKING:
    # The records' declared shapes are types only here: importing them (every TypedDict of the
    # journal) was a tenth of what the terminal UI's own modules cost it at start-up.
    from openvaala_server.client.notes import Note
    from openvaala_server.domain.records import Item

__all__ = [
    "AWAITING_APPROVAL",
    "DECISIONS",
    "ITEM_BUDGET",
    "LOCAL_PREFIX",
    "Approval",
    "ApprovalsChanged",
    "Change",
    "ConversationView",
    "Deleted",
    "InboxChanged",
    "Item",
    "ItemAdded",
    "ItemDelta",
    "ItemRemoved",
    "ItemUpdated",
    "PlanChanged",
    "Reset",
    "SessionView",
    "SessionsChanged",
    "StatusChanged",
    "TurnEnded",
    "TurnStarted",
    "outcome_text",
]

Params = Mapping[str, object]  # a notification's params, as decoded (or a payload type)


def _object(value: object) -> JsonObject:
    # Decoded JSON (or a payload type, which is JSON too): its values are JSON values.
    return cast(JsonObject, dict(value)) if isinstance(value, Mapping) else {}


def _objects(value: object) -> list[JsonObject]:
    return [_object(v) for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _item(value: object) -> Item:
    # The daemon's items are the records' shape (domain/records.py): decoded JSON is taken as
    # that shape here, at the one place the fold receives them.
    return cast("Item", _object(value))


ITEM_BUDGET = 2000  # items per session kept in memory; older ones are read again on demand
LOCAL_PREFIX = "local-"  # item ids made by the UI (e.g. a turn's error), never sent to the daemon


# -- changes: what a screen redraws ----------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """Something changed in `session_id` (None: the conversation as a whole)."""

    session_id: str | None


@dataclass(frozen=True)
class Reset(Change):
    """Redraw everything (a snapshot)."""


@dataclass(frozen=True)
class ItemAdded(Change):
    item: Item


@dataclass(frozen=True)
class ItemDelta(Change):
    item_id: str
    field: str
    delta: str


@dataclass(frozen=True)
class ItemUpdated(Change):
    item: Item


@dataclass(frozen=True)
class ItemRemoved(Change):
    item_id: str


@dataclass(frozen=True)
class InboxChanged(Change):
    pass


@dataclass(frozen=True)
class StatusChanged(Change):
    """Turn state, usage, retry, model, title or connection: the status bar redraws."""


@dataclass(frozen=True)
class TurnStarted(StatusChanged):
    """A turn of the session started (the status bar redraws, as for any `StatusChanged`)."""

    turn_id: str


@dataclass(frozen=True)
class TurnEnded(StatusChanged):
    """A turn of the session ended: how (`turn/ended`'s status and error)."""

    turn_id: str
    status: str
    error: JsonObject | None = None


@dataclass(frozen=True)
class SessionsChanged(Change):
    pass


@dataclass(frozen=True)
class Deleted(Change):
    pass


@dataclass(frozen=True)
class PlanChanged(Change):
    """The session's plan (`update_plan`) changed: the plan panel redraws."""


@dataclass(frozen=True)
class ApprovalsChanged(Change):
    """An approval was asked or resolved: the prompt shows the next pending one, if any."""


# -- approvals -------------------------------------------------------------------------------

AWAITING_APPROVAL = "awaiting_approval"  # session status while a tool call waits for the user
DECISIONS = ("allow", "allow_conversation", "deny")


@dataclass(frozen=True)
class Approval:
    """One pending `approval/requested`: what a tool call would do and why it asks."""

    approval_id: str
    session_id: str
    tool: str
    summary: str
    reason: str
    agent: str
    arguments: JsonObject = field(default_factory=dict)
    # What "allow for this conversation" would allow, in words; None: it cannot be granted
    # (`no_grant_reason` says why). Every client shows it before the user answers.
    grant_scope: str | None = None
    no_grant_reason: str = ""
    # What a file-changing call would change, one `FileDiff` per file (docs/protocol.md,
    # approval/requested): every client shows it with the question.
    diffs: list[JsonObject] = field(default_factory=list)
    # The `approval/requested` payload as it came (without conversationId and seq), for a
    # client that passes it on (the editor bridge's `openvaala/approvalRequested`).
    wire: JsonObject = field(default_factory=dict, compare=False)

    @classmethod
    def from_wire(cls, params: Params) -> Approval:
        arguments = params.get("arguments")
        wire = _object({k: v for k, v in params.items() if k not in ("conversationId", "seq")})
        return cls(
            approval_id=str(params.get("approvalId") or ""),
            session_id=str(params.get("sessionId") or ""),
            tool=str(params.get("tool") or "tool"),
            summary=str(params.get("summary") or ""),
            reason=str(params.get("reason") or ""),
            agent=str(params.get("agent") or ""),
            arguments=_object(arguments),
            grant_scope=scope if isinstance(scope := params.get("grantScope"), str) else None,
            no_grant_reason=str(params.get("noGrantReason") or ""),
            diffs=_objects(params.get("diffs")),
            wire=wire,
        )

    @property
    def grantable(self) -> bool:
        return self.grant_scope is not None

    def grant_text(self) -> str:
        """The "allow for this conversation" choice as every client words it."""
        if self.grant_scope is not None:
            return f"Allow for this conversation: {self.grant_scope}"
        why = self.no_grant_reason or "nothing could be remembered for this call"
        return f"Cannot be allowed for this conversation: {why}"


def outcome_text(
    approval: Approval, decision: str, message: str, by_us: bool, not_granted: str = ""
) -> str:
    """The transcript's line once an approval is resolved (`not_granted`: "allow for this
    conversation" was answered, but only this call could be allowed, and why)."""
    what = f"{approval.tool}: {approval.summary}" if approval.summary else approval.tool
    verdict = {
        "allow": "Allowed once",
        "allow_conversation": "Allowed for this conversation",
    }.get(decision, "Denied")
    text = f"{verdict} · {what}"
    if decision == "allow_conversation" and approval.grant_scope:
        text += f" · covers {approval.grant_scope}"
    if not_granted:
        text += f" · {not_granted}"
    if decision == "deny" and message:
        text += f" · “{message}”"
    if not by_us:
        text += " (answered from another client)"
    return text


# -- state -----------------------------------------------------------------------------------


@dataclass
class SessionView:
    session_id: str
    info: JsonObject
    items: list[Item] = field(default_factory=list)
    has_more: bool = False
    turn_id: str | None = None
    inbox: list[JsonObject] = field(default_factory=list)
    usage: JsonObject = field(default_factory=dict)
    retry: JsonObject | None = None  # the last retry/scheduled, until the call goes on
    compacting: bool = False
    last_error: JsonObject | None = None  # of the last failed turn
    plan: JsonObject | None = None  # the agent's checklist (docs/protocol.md, "Plan")
    pinned: list[str] = field(default_factory=list)  # pinned item ids (docs/protocol.md, Context)

    @property
    def status(self) -> str:
        return str(self.info.get("status") or "idle")

    @property
    def parent_id(self) -> str | None:
        parent = self.info.get("parentSessionId")
        return str(parent) if parent else None

    @property
    def running(self) -> bool:
        """A turn is in progress (also while it waits for an approval: it can be interrupted)."""
        return self.turn_id is not None or self.status == AWAITING_APPROVAL

    @property
    def awaiting_approval(self) -> bool:
        return self.status == AWAITING_APPROVAL

    def find(self, item_id: str) -> int | None:
        for index in range(len(self.items) - 1, -1, -1):
            if self.items[index].get("itemId") == item_id:
                return index
        return None

    def put(self, item: Item) -> bool:
        """Add `item`, or replace the one with its id; True when it is new."""
        index = self.find(str(item.get("itemId")))
        if index is None:
            self.items.append(item)
            return True
        self.items[index] = item
        return False

    def user_messages(self) -> list[Item]:
        return [
            i
            for i in self.items
            if i.get("type") == "user_message" and i.get("origin", "user") == "user"
        ]


class ConversationView:
    def __init__(self, *, local_notices: bool = True) -> None:
        self.local_notices = local_notices
        self.version = 0  # goes up with every change that alters what a client draws
        self.conversation: JsonObject = {}
        self.sessions: dict[str, SessionView] = {}
        self.seq = 0
        self.connection = "connected"
        self.connection_message = ""  # why reconnecting fails, when the client says
        self.deleted = False
        self.approvals: dict[str, Approval] = {}  # pending, by approvalId, oldest first
        # Approvals this client answered (or is answering), and with what.
        self.answered_here: dict[str, str] = {}
        # Ids of the replies a daemon crash cut that this view keeps (no daemon has them).
        self.kept_cut: set[str] = set()

    # -- identity --------------------------------------------------------------------------

    @property
    def conversation_id(self) -> str:
        return str(self.conversation.get("conversationId") or "")

    @property
    def root_id(self) -> str:
        root = self.conversation.get("rootSessionId")
        if isinstance(root, str) and root in self.sessions:
            return root
        for sid, session in self.sessions.items():
            if not session.info.get("parentSessionId"):
                return sid
        return next(iter(self.sessions), "")

    @property
    def root(self) -> SessionView | None:
        return self.sessions.get(self.root_id)

    def children(self, session_id: str) -> list[SessionView]:
        return [s for s in self.sessions.values() if s.parent_id == session_id]

    @property
    def title(self) -> str:
        return str(self.conversation.get("title") or "New conversation")

    def next_approval(self) -> Approval | None:
        """The oldest pending approval this client has not answered yet."""
        for approval in self.approvals.values():
            if approval.approval_id not in self.answered_here:
                return approval
        return None

    def agent_of(self, approval: Approval) -> str | None:
        """The name of the agent asking, when it is a subagent (None for the root agent)."""
        if not approval.session_id or approval.session_id == self.root_id:
            return None
        session = self.sessions.get(approval.session_id)
        name = approval.agent or (str(session.info.get("agent") or "") if session else "")
        return name or "subagent"

    # -- folding ---------------------------------------------------------------------------

    @classmethod
    def from_snapshot(
        cls, snapshot: Params, seq: int, *, local_notices: bool = True
    ) -> ConversationView:
        view = cls(local_notices=local_notices)
        view.load(snapshot, seq)
        return view

    def load(self, snapshot: Params, seq: int) -> list[Change]:
        """Replace everything with a snapshot taken at `seq`."""
        self.conversation = _object(snapshot.get("conversation"))
        before, self.sessions = self.sessions, {}
        kept_before, self.kept_cut = self.kept_cut, set()
        self.deleted = False
        self.seq = seq
        for wire in _objects(snapshot.get("sessions")):
            session = self._session_from_wire(wire)
            if (old := before.get(session.session_id)) is not None:
                # A reply the daemon streamed before it crashed stays, interrupted.
                fresh = {str(item.get("itemId")) for item in session.items}
                session.items = keep_cut_stream(
                    old.items, old.turn_id, session.items, session.turn_id, kept_before
                )
                self.kept_cut |= {str(i.get("itemId")) for i in session.items} - fresh
            self.sessions[session.session_id] = session
        self.approvals = {}
        for wire in _objects(snapshot.get("approvals")):
            approval = Approval.from_wire(wire)
            self.approvals[approval.approval_id] = approval
        self.answered_here = {a: d for a, d in self.answered_here.items() if a in self.approvals}
        self.version += 1
        return [Reset(None)]

    def apply(self, note: Note | Params) -> list[Change]:
        """Fold one notification as the client yields it (`{"method", "params"}`), or as a
        recorded stream holds it (tests/client/)."""
        params = note.get("params")
        return self.fold(
            str(note.get("method") or ""), params if isinstance(params, Mapping) else {}
        )

    def fold(self, method: str, params: Params) -> list[Change]:
        """Fold one notification in; what changed (nothing: an event already seen, or one
        that changes nothing drawn)."""
        changes = self._fold(method, params)
        if changes and not isinstance(changes[0], Reset):  # load() counted a snapshot
            self.version += 1
        return changes

    def _fold(self, method: str, params: Params) -> list[Change]:
        if method == "client/connection":
            self.connection = str(params.get("state") or "connected")
            self.connection_message = str(params.get("message") or "")
            return [StatusChanged(None)]
        if method == "conversation/snapshot":
            seq = params.get("seq")
            return self.load(_object(params.get("snapshot")), seq if isinstance(seq, int) else 0)
        seq = params.get("seq")
        if isinstance(seq, int):
            if seq <= self.seq:
                return []  # already part of the snapshot
            self.seq = seq
        handler = _HANDLERS.get(method)
        return handler(self, params) if handler else []

    def prepend(self, session_id: str, items: list[Item], has_more: bool) -> list[Item]:
        """Older items read with `conversation/read {beforeItem}`; returns those that were new."""
        session = self.sessions.get(session_id)
        if session is None:
            return []
        known = {i.get("itemId") for i in session.items}
        fresh = [i for i in items if i.get("itemId") not in known]
        session.items[:0] = fresh
        session.has_more = has_more
        return fresh

    # -- handlers --------------------------------------------------------------------------

    def _session_from_wire(self, wire: Params) -> SessionView:
        skip = ("items", "turn", "inbox", "usage", "plan", "pinned")
        info = _object({k: v for k, v in wire.items() if k not in skip})
        session = SessionView(session_id=str(wire.get("sessionId")), info=info)
        session.items = [_item(i) for i in _objects(wire.get("items"))]
        session.has_more = bool(wire.get("hasMore"))
        turn = wire.get("turn")
        if isinstance(turn, dict):
            session.turn_id = str(turn.get("turnId"))
            for item in _objects(turn.get("items")):
                session.put(_item(item))
        session.inbox = _objects(wire.get("inbox"))
        session.usage = _object(wire.get("usage"))
        plan = wire.get("plan")
        session.plan = dict(plan) if isinstance(plan, dict) else None
        pinned = wire.get("pinned")
        session.pinned = [str(p) for p in pinned] if isinstance(pinned, list) else []
        return session

    def _session(self, params: Params) -> SessionView:
        sid = str(params.get("sessionId") or self.root_id)
        session = self.sessions.get(sid)
        if session is None:
            session = SessionView(session_id=sid, info={"sessionId": sid, "status": "idle"})
            self.sessions[sid] = session
        return session

    def _conversation_updated(self, params: Params) -> list[Change]:
        self.conversation.update(_object(params.get("conversation")))
        return [StatusChanged(None)]

    def _conversation_deleted(self, params: Params) -> list[Change]:
        self.deleted = True
        return [Deleted(None)]

    def _session_updated(self, params: Params) -> list[Change]:
        wire = _object(params.get("session"))
        sid = str(wire.get("sessionId") or "")
        if not sid:
            return []
        session = self.sessions.get(sid)
        if session is None:
            self.sessions[sid] = SessionView(session_id=sid, info=wire)
        else:
            session.info.update(wire)
        return [SessionsChanged(sid), StatusChanged(sid)]

    def _turn_started(self, params: Params) -> list[Change]:
        session = self._session(params)
        session.turn_id = str(params.get("turnId"))
        session.retry = None
        session.last_error = None
        return [TurnStarted(session.session_id, session.turn_id)]

    def _turn_ended(self, params: Params) -> list[Change]:
        session = self._session(params)
        session.turn_id = None
        session.retry = None
        # The session's status is the daemon's (the `session/updated` that follows), not
        # guessed here: the web client's fold does the same (tests/client/test_fold_parity.py).
        status = str(params.get("status") or "completed")
        error = params.get("error")
        turn_id = params.get("turnId")
        changes: list[Change] = [
            TurnEnded(
                session.session_id,
                str(turn_id),
                status,
                _object(error) if isinstance(error, Mapping) else None,
            )
        ]
        stale = [a for a, p in self.approvals.items() if p.session_id == session.session_id]
        if stale:  # the daemon resolves them first; none may outlive the turn that asked
            for approval_id in stale:
                del self.approvals[approval_id]
            changes.append(ApprovalsChanged(session.session_id))
        if status == "failed" and isinstance(error, dict):
            session.last_error = error
            if not self.local_notices or any(
                i.get("type") == "notice" and i.get("turnId") == turn_id
                for i in session.items[-20:]
            ):
                return changes  # the daemon kept a notice saying why (kind "turn_failed")
            # No notice from the daemon (it could not save one): say why here, locally.
            notice: Item = {
                "itemId": f"{LOCAL_PREFIX}{turn_id}",
                "type": "notice",
                "kind": "error",
                "status": "failed",
                "sessionId": session.session_id,
                "text": f"The turn failed: {error.get('message') or error.get('kind')}",
            }
            session.items.append(notice)
            changes.append(ItemAdded(session.session_id, notice))
        return changes

    def _item_started(self, params: Params) -> list[Change]:
        session = self._session(params)
        item = _item(params.get("item"))
        session.retry = None
        index = session.find(str(item.get("itemId")))
        if index is not None:
            session.items[index] = item
            return [ItemUpdated(session.session_id, item), StatusChanged(session.session_id)]
        session.items.append(item)
        changes: list[Change] = [ItemAdded(session.session_id, item)]
        return changes + self._trim(session)

    def _item_delta(self, params: Params) -> list[Change]:
        session = self._session(params)
        item_id = str(params.get("itemId"))
        index = session.find(item_id)
        if index is None:
            return []
        name = str(params.get("field") or "text")
        delta = str(params.get("delta") or "")
        item = session.items[index]
        # The two streamed fields (docs/protocol.md, item/delta).
        if name == "output":
            item["output"] = item.get("output", "") + delta
        else:
            item["text"] = item.get("text", "") + delta
        changes: list[Change] = [ItemDelta(session.session_id, item_id, name, delta)]
        if session.retry is not None:
            session.retry = None
            changes.append(StatusChanged(session.session_id))
        return changes

    def _item_completed(self, params: Params) -> list[Change]:
        session = self._session(params)
        item = _item(params.get("item"))
        index = session.find(str(item.get("itemId")))
        if index is None:
            session.items.append(item)
            return [ItemAdded(session.session_id, item), *self._trim(session)]
        session.items[index] = item
        return [ItemUpdated(session.session_id, item)]

    def _item_discarded(self, params: Params) -> list[Change]:
        session = self._session(params)
        item_id = str(params.get("itemId"))
        index = session.find(item_id)
        if index is None:
            return []
        del session.items[index]
        return [ItemRemoved(session.session_id, item_id)]

    def _inbox_updated(self, params: Params) -> list[Change]:
        session = self._session(params)
        session.inbox = _objects(params.get("inputs"))
        return [InboxChanged(session.session_id)]

    def _usage_updated(self, params: Params) -> list[Change]:
        session = self._session(params)
        usage = params.get("usage")
        if not isinstance(usage, dict):  # the fields may also come flat
            usage = {
                k: v for k, v in params.items() if k not in ("sessionId", "conversationId", "seq")
            }
        session.usage = _object(usage)
        return [StatusChanged(session.session_id)]

    def _plan_updated(self, params: Params) -> list[Change]:
        session = self._session(params)
        plan = params.get("plan")
        session.plan = dict(plan) if isinstance(plan, dict) else None
        return [PlanChanged(session.session_id)]

    def _retry_scheduled(self, params: Params) -> list[Change]:
        session = self._session(params)
        session.retry = _object(params)
        return [StatusChanged(session.session_id)]

    def _compaction(self, params: Params, running: bool) -> list[Change]:
        session = self._session(params)
        session.compacting = running
        return [StatusChanged(session.session_id)]

    def _approval_requested(self, params: Params) -> list[Change]:
        approval = Approval.from_wire(params)
        if not approval.approval_id:
            return []
        self.approvals[approval.approval_id] = approval
        return [ApprovalsChanged(approval.session_id or None)]

    def _approval_resolved(self, params: Params) -> list[Change]:
        approval_id = str(params.get("approvalId") or "")
        approval = self.approvals.pop(approval_id, None)
        if approval is None:
            return []
        decision = str(params.get("decision") or "deny")
        not_granted = str(params.get("notGranted") or "")
        ours = self.answered_here.pop(approval_id, None)
        # "allow_conversation" of what cannot be granted comes back as "allow" (notGranted).
        by_us = ours == decision or (ours == "allow_conversation" and bool(not_granted))
        session = self._session({"sessionId": approval.session_id or params.get("sessionId")})
        if not self.local_notices:
            return [ApprovalsChanged(session.session_id)]
        message = str(params.get("message") or "")
        notice: Item = {
            "itemId": f"{LOCAL_PREFIX}approval-{approval_id}",
            "type": "notice",
            "kind": "error" if decision == "deny" else "info",
            "status": "completed",
            "sessionId": session.session_id,
            "text": outcome_text(approval, decision, message, by_us, not_granted),
        }
        session.items.append(notice)
        return [
            ApprovalsChanged(session.session_id),
            ItemAdded(session.session_id, notice),
            *self._trim(session),
        ]

    def _pins_updated(self, params: Params) -> list[Change]:
        session = self.sessions.get(str(params.get("sessionId")))
        if session is not None:
            pinned = params.get("itemIds")
            session.pinned = [str(p) for p in pinned] if isinstance(pinned, list) else []
        return []

    def _trim(self, session: SessionView) -> list[Change]:
        extra = len(session.items) - ITEM_BUDGET
        if extra <= 0:
            return []
        dropped = session.items[:extra]
        del session.items[:extra]
        session.has_more = True
        return [ItemRemoved(session.session_id, str(i.get("itemId"))) for i in dropped]


_HANDLERS: dict[str, Callable[[ConversationView, Params], list[Change]]] = {
    methods.CONVERSATION_UPDATED: ConversationView._conversation_updated,
    methods.CONVERSATION_DELETED: ConversationView._conversation_deleted,
    methods.SESSION_STARTED: ConversationView._session_updated,
    methods.SESSION_UPDATED: ConversationView._session_updated,
    methods.TURN_STARTED: ConversationView._turn_started,
    methods.TURN_ENDED: ConversationView._turn_ended,
    methods.ITEM_STARTED: ConversationView._item_started,
    methods.ITEM_DELTA: ConversationView._item_delta,
    methods.ITEM_COMPLETED: ConversationView._item_completed,
    methods.ITEM_DISCARDED: ConversationView._item_discarded,
    methods.INBOX_UPDATED: ConversationView._inbox_updated,
    methods.USAGE_UPDATED: ConversationView._usage_updated,
    methods.RETRY_SCHEDULED: ConversationView._retry_scheduled,
    methods.PLAN_UPDATED: ConversationView._plan_updated,
    methods.PINS_UPDATED: ConversationView._pins_updated,
    methods.APPROVAL_REQUESTED: ConversationView._approval_requested,
    methods.APPROVAL_RESOLVED: ConversationView._approval_resolved,
    methods.COMPACTION_STARTED: lambda view, params: view._compaction(params, True),
    methods.COMPACTION_COMPLETED: lambda view, params: view._compaction(params, False),
    methods.COMPACTION_FAILED: lambda view, params: view._compaction(params, False),
}


def __getattr__(name: str) -> object:
    """`Item` for the modules that import it from here at run time (the editor bridge's
    render): loaded when first asked for, not with the fold (see the imports above)."""
    if name == "Item":
        from openvaala_server.domain.records import Item

        return Item
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
