"""Folding ``metadata.jsonl`` records into the state of a conversation.

Pure: the store replays a file through `apply` at open and at reindex, and the runtime applies
each record it appends, so the live view and a rebuilt one are the same function of the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Final, cast

from openvaala_server.domain import records as r
from openvaala_server.domain.approvals import GRANT_KINDS, Grant
from openvaala_server.domain.permission_mode import PermissionMode, is_mode
from openvaala_server.domain.plan import Plan, plan_from_record

# A record as read from disk: nothing but its `seq` and `type` is checked by the reader, so every
# field is checked here before it is used (a damaged record is counted, never fatal).
Fields = Mapping[str, object]


class MetaError(ValueError):
    """The file cannot describe a conversation (e.g. its first record is not a creation)."""


@dataclass
class TurnMeta:
    turn_id: str
    session_id: str
    started_at: str
    status: str = "running"  # running | completed | failed | interrupted
    ended_at: str | None = None
    error: r.ErrorInfo | None = None


class Turns(MutableMapping[str, TurnMeta]):
    """A conversation's turns by id, in the order they started.

    Read from a long conversation's folded metadata (store/folded.py), it holds decoded only the
    turns an open asks for — every running one, each session's last one and the very last — and
    decodes the rest (`rest`) the first time anything else is asked: an open of a 10k-turn
    conversation then decodes a few hundred rows rather than 10k (docs/design.md, "Subagent
    sessions paged on demand, turns decoded when asked"). Turns started meanwhile are kept
    apart and come after the decoded ones, as they came after them in the journal."""

    def __init__(
        self,
        known: Iterable[TurnMeta] = (),
        rest: Callable[[], list[TurnMeta]] | None = None,
        count: int = 0,
    ) -> None:
        # Every turn, in order, once `rest` has been decoded (or when there was none).
        self._all: dict[str, TurnMeta] | None = None
        self._known = {t.turn_id: t for t in known}  # the turns decoded eagerly, in order
        self._added: dict[str, TurnMeta] = {}  # turns started since, in order
        self._rest = rest
        self._count = count  # how many turns `rest` holds (the known ones among them)
        if rest is None:
            self._all = self._known

    def _whole(self) -> dict[str, TurnMeta]:
        if self._all is None:
            assert self._rest is not None
            # The eager ones are the same objects as the decoded: a change made to one of them
            # (a turn that ended) is kept.
            whole = {t.turn_id: self._known.get(t.turn_id, t) for t in self._rest()}
            whole.update(self._added)
            self._all, self._rest, self._added = whole, None, {}
        return self._all

    def _cheap(self, turn_id: str) -> TurnMeta | None:
        if self._all is not None:
            return self._all.get(turn_id)
        return self._added.get(turn_id) or self._known.get(turn_id)

    def __getitem__(self, turn_id: str) -> TurnMeta:
        found = self._cheap(turn_id)
        return found if found is not None else self._whole()[turn_id]

    def __setitem__(self, turn_id: str, turn: TurnMeta) -> None:
        if self._all is not None:
            self._all[turn_id] = turn
        elif turn_id in self._known:
            self._known[turn_id] = turn
        else:  # a turn started after the fold: ids are new (domain/ids.py)
            self._added[turn_id] = turn

    def __delitem__(self, turn_id: str) -> None:
        del self._whole()[turn_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._whole())

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._whole())

    def __len__(self) -> int:
        if self._all is not None:
            return len(self._all)
        return self._count + len(self._added)

    def last(self) -> TurnMeta | None:
        if self._all is not None:
            return next(reversed(self._all.values()), None)
        if self._added:
            return next(reversed(self._added.values()))
        return next(reversed(self._known.values()), None)

    def running(self) -> list[TurnMeta]:
        """The running turns (every one of them is among the known or the added)."""
        if self._all is not None:
            return [t for t in self._all.values() if t.status == "running"]
        return [t for t in (*self._known.values(), *self._added.values()) if t.status == "running"]


@dataclass
class SessionMeta:
    session_id: str
    parent_session_id: str | None
    agent: str
    model: str
    title: str
    created_at: str
    closed: bool = False
    # The user chose `model` for this session (conversation/create's `model`, conversation/
    # setModel): switching the agent then keeps it (docs/protocol.md, conversation/setAgent).
    model_chosen: bool = False
    last_turn_id: str | None = None
    # The checklist of its last `update_plan` call (None: it never made one).
    plan: Plan | None = None


@dataclass
class ConversationMeta:
    conversation_id: str
    cwd: str
    agent: str
    model: str
    title: str
    title_source: str  # "auto" (from the first message) | "user" (renamed)
    root_session_id: str
    created_at: str
    updated_at: str
    format_version: int
    forked_from: r.ForkedFrom | None = None
    archived: bool = False
    sessions: dict[str, SessionMeta] = field(default_factory=dict)
    turns: Turns = field(default_factory=Turns)
    # What the user allowed for the whole conversation, oldest first.
    grants: list[Grant] = field(default_factory=list)
    # The permission mode the user chose (None: the agent's configuration as it is).
    permission_mode: PermissionMode | None = None
    # Pinned item ids per session, in the order they were pinned.
    pins: dict[str, list[str]] = field(default_factory=dict)
    unknown_records: int = 0

    @property
    def last_turn(self) -> TurnMeta | None:
        return self.turns.last()

    @property
    def last_status(self) -> str:
        """The status of the root agent's last turn: what a conversation list shows."""
        root = self.sessions.get(self.root_session_id)
        turn = self.turns.get(root.last_turn_id) if root and root.last_turn_id else None
        return turn.status if turn else "idle"

    def running_turns(self) -> list[TurnMeta]:
        return self.turns.running()


def created_from(record: Fields) -> ConversationMeta:
    if record.get("type") != r.CONVERSATION_CREATED:
        raise MetaError("the first record is not conversation_created")
    version = record.get("formatVersion", 1)
    if not isinstance(version, int):
        raise MetaError("formatVersion is not a number")
    if version > r.FORMAT_VERSION:
        raise MetaError(f"written by a newer OpenVaala (format {version} > {r.FORMAT_VERSION})")
    try:
        meta = ConversationMeta(
            conversation_id=str(record["conversationId"]),
            cwd=str(record["cwd"]),
            agent=str(record["agent"]),
            model=str(record["model"]),
            title=str(record.get("title") or ""),
            title_source=str(record.get("titleSource") or "auto"),
            root_session_id=str(record["rootSessionId"]),
            created_at=str(record["ts"]),
            updated_at=str(record["ts"]),
            format_version=version,
            forked_from=_forked_from(record.get("forkedFrom")),
        )
    except KeyError as exc:
        raise MetaError(f"conversation_created lacks {exc.args[0]!r}") from None
    meta.sessions[meta.root_session_id] = SessionMeta(
        session_id=meta.root_session_id,
        parent_session_id=None,
        agent=meta.agent,
        model=meta.model,
        title=meta.title,
        created_at=meta.created_at,
        model_chosen=record.get("modelChosen") is True,
    )
    return meta


# Records that file a conversation away or back without changing it: its `updatedAt`, and so its
# place in the list, stays (docs/design.md, "Archiving is not an update").
_NOT_AN_UPDATE: Final = frozenset({r.CONVERSATION_ARCHIVED, r.CONVERSATION_UNARCHIVED})


def apply(meta: ConversationMeta, record: Fields) -> None:
    """Apply one record after the creation record. Unknown types and damaged records are
    counted, never fatal."""
    kind = record.get("type")
    ts = str(record.get("ts") or meta.updated_at)
    if kind not in _NOT_AN_UPDATE:
        meta.updated_at = max(meta.updated_at, ts)
    handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
    if handler is None or not handler(meta, record, ts):
        meta.unknown_records += 1


# Each handler folds one type of the record union (`records.MetadataPayload`) and answers False
# for a damaged record, which then changes nothing.
Handler = Callable[[ConversationMeta, Fields, str], bool]


def _renamed(meta: ConversationMeta, record: Fields, ts: str) -> bool:  # ConversationRenamed
    meta.title = str(record.get("title") or "")
    meta.title_source = str(record.get("titleSource") or "user")
    meta.sessions[meta.root_session_id].title = meta.title
    return True


def _archived(meta: ConversationMeta, record: Fields, ts: str) -> bool:  # ConversationArchived
    meta.archived = record.get("type") == r.CONVERSATION_ARCHIVED
    return True


def _session_created(meta: ConversationMeta, record: Fields, ts: str) -> bool:  # SessionCreated
    sid = record.get("sessionId")
    if not isinstance(sid, str):
        return False
    meta.sessions[sid] = SessionMeta(
        session_id=sid,
        parent_session_id=_str_or_none(record.get("parentSessionId")),
        agent=str(record.get("agent") or meta.agent),
        model=str(record.get("model") or meta.model),
        title=str(record.get("title") or ""),
        created_at=ts,
    )
    return True


def _model_set(meta: ConversationMeta, record: Fields, ts: str) -> bool:  # SessionModelSet
    session = meta.sessions.get(str(record.get("sessionId")))
    model = record.get("model")
    if not isinstance(model, str) or not model:
        return False
    if session is not None:
        session.model = model
        # `by: "agent"`: the agent's model came with a switch of agent, nobody chose it.
        session.model_chosen = record.get("by") != "agent"
        if session.session_id == meta.root_session_id:
            meta.model = model
    return True


def _agent_set(meta: ConversationMeta, record: Fields, ts: str) -> bool:  # SessionAgentSet
    session = meta.sessions.get(str(record.get("sessionId")))
    agent = record.get("agent")
    if session is None or not isinstance(agent, str) or not agent:
        return False
    session.agent = agent
    if session.session_id == meta.root_session_id:
        meta.agent = agent
    return True


def _cwd_set(meta: ConversationMeta, record: Fields, ts: str) -> bool:  # ConversationCwdSet
    cwd = record.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return False
    meta.cwd = cwd
    return True


def _mode_set(meta: ConversationMeta, record: Fields, ts: str) -> bool:  # PermissionModeSet
    mode = record.get("mode")
    if not is_mode(mode):
        return False
    meta.permission_mode = mode
    return True


def _session_closed(meta: ConversationMeta, record: Fields, ts: str) -> bool:  # SessionClosed
    session = meta.sessions.get(str(record.get("sessionId")))
    if session is not None:
        session.closed = True
    return True


def _turn_started(meta: ConversationMeta, record: Fields, ts: str) -> bool:  # TurnStarted
    tid, sid = record.get("turnId"), record.get("sessionId")
    if not (isinstance(tid, str) and isinstance(sid, str)):
        return False
    meta.turns[tid] = TurnMeta(turn_id=tid, session_id=sid, started_at=ts)
    if sid in meta.sessions:
        meta.sessions[sid].last_turn_id = tid
    return True


def _turn_ended(meta: ConversationMeta, record: Fields, ts: str) -> bool:  # TurnEnded
    turn = meta.turns.get(str(record.get("turnId")))
    if turn is not None:
        turn.status = str(record.get("status") or "completed")
        turn.ended_at = ts
        turn.error = _error(record.get("error"))
    return True


def _granted(meta: ConversationMeta, record: Fields, ts: str) -> bool:  # ApprovalGranted
    grant = _grant(record)
    if grant is None:
        return False
    if grant not in meta.grants:
        meta.grants.append(grant)
    return True


def _plan_updated(meta: ConversationMeta, record: Fields, ts: str) -> bool:  # PlanUpdated
    session = meta.sessions.get(str(record.get("sessionId")))
    plan = plan_from_record(record.get("plan"))
    if session is None or plan is None:
        return False
    session.plan = plan
    return True


def _pin(meta: ConversationMeta, record: Fields, ts: str) -> bool:  # ItemPinned
    owner, item_id = record.get("sessionId"), record.get("itemId")
    if not (isinstance(owner, str) and isinstance(item_id, str)):
        return False
    pins = meta.pins.setdefault(owner, [])
    if record.get("type") == r.ITEM_PINNED:
        if item_id not in pins:
            pins.append(item_id)
    elif item_id in pins:
        pins.remove(item_id)
    return True


_HANDLERS: Final[Mapping[str, Handler]] = {
    r.CONVERSATION_RENAMED: _renamed,
    r.CONVERSATION_ARCHIVED: _archived,
    r.CONVERSATION_UNARCHIVED: _archived,
    r.SESSION_CREATED: _session_created,
    r.SESSION_MODEL_SET: _model_set,
    r.SESSION_AGENT_SET: _agent_set,
    r.CONVERSATION_CWD_SET: _cwd_set,
    r.PERMISSION_MODE_SET: _mode_set,
    r.SESSION_CLOSED: _session_closed,
    r.TURN_STARTED: _turn_started,
    r.TURN_ENDED: _turn_ended,
    r.APPROVAL_GRANTED: _granted,
    r.PLAN_UPDATED: _plan_updated,
    r.ITEM_PINNED: _pin,
    r.ITEM_UNPINNED: _pin,
}


def folded_types() -> frozenset[str]:
    """The record types `apply` folds (every type of `records.MetadataPayload` but the
    creation, which `created_from` reads)."""
    return frozenset(_HANDLERS)


def _grant(record: Fields) -> Grant | None:
    tool, kind, pattern = record.get("tool"), record.get("kind"), record.get("pattern")
    outside = record.get("outsideSandbox", False)
    if not (isinstance(tool, str) and isinstance(pattern, str) and pattern):
        return None
    if not isinstance(outside, bool):
        return None
    for known in GRANT_KINDS:
        if kind == known:
            return Grant(tool, known, pattern, outside)
    return None


def grant_record(grant: Grant, session_id: str) -> r.ApprovalGranted:
    """The `approval_granted` record that `apply` folds back into `grant`."""
    return {
        "type": r.APPROVAL_GRANTED,
        "sessionId": session_id,
        "tool": grant.tool,
        "kind": grant.kind,
        "pattern": grant.pattern,
        "outsideSandbox": grant.outside_sandbox,
    }


def fold(records: Sequence[Fields]) -> ConversationMeta:
    if not records:
        raise MetaError("metadata.jsonl is empty")
    meta = created_from(records[0])
    for record in records[1:]:
        apply(meta, record)
    return meta


def session_status(meta: ConversationMeta, session_id: str) -> str:
    """idle | running | interrupted | failed | closed, from the session's last turn."""
    session = meta.sessions[session_id]
    if session.closed:
        return "closed"
    turn = meta.turns.get(session.last_turn_id) if session.last_turn_id else None
    if turn is None or turn.status == "completed":
        return "idle"
    return turn.status


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _forked_from(value: object) -> r.ForkedFrom | None:
    """The `forkedFrom` of a creation record as written (history.fork), or None when it is
    absent or not one."""
    if not isinstance(value, dict) or not isinstance(value.get("conversationId"), str):
        return None
    return cast(r.ForkedFrom, value)


def _error(value: object) -> r.ErrorInfo | None:
    """A turn's `error` as written (`{kind, message}`), or None."""
    return cast(r.ErrorInfo, value) if isinstance(value, dict) else None
