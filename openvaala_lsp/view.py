"""What drawing a transcript needs, folded from a subscription's snapshot and its events.

This is a cache of the daemon's state, rebuilt from a fresh snapshot whenever the daemon sends one;
the bridge never decides anything from it and never writes it back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Item = dict[str, Any]


@dataclass
class SessionView:
    info: dict[str, Any]
    items: list[Item] = field(default_factory=list)
    has_more: bool = False
    inbox: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    compacting: bool = False
    plan: dict[str, Any] | None = None  # the agent's checklist (docs/protocol.md, "Plan")

    @property
    def session_id(self) -> str:
        return str(self.info.get("sessionId", ""))

    @property
    def parent_id(self) -> str | None:
        parent = self.info.get("parentSessionId")
        return str(parent) if parent else None

    def find(self, item_id: str) -> int | None:
        for index in range(len(self.items) - 1, -1, -1):
            if self.items[index].get("itemId") == item_id:
                return index
        return None

    def put(self, item: Item) -> None:
        index = self.find(str(item.get("itemId")))
        if index is None:
            self.items.append(dict(item))
        else:
            self.items[index] = dict(item)


@dataclass
class ConversationView:
    conversation: dict[str, Any]
    sessions: dict[str, SessionView]
    seq: int
    version: int = 1  # bumped by every change that alters the rendering
    deleted: bool = False
    # Pending approvals by approvalId, oldest first: the `approval/requested` payloads.
    approvals: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any], seq: int) -> ConversationView:
        sessions: dict[str, SessionView] = {}
        for raw in snapshot.get("sessions") or []:
            info = {
                k: v
                for k, v in raw.items()
                if k not in {"items", "hasMore", "turn", "inbox", "usage", "plan"}
            }
            view = SessionView(
                info=info,
                items=[dict(i) for i in raw.get("items") or []],
                has_more=bool(raw.get("hasMore")),
                inbox=list(raw.get("inbox") or []),
                usage=raw.get("usage"),
                plan=raw.get("plan") if isinstance(raw.get("plan"), dict) else None,
            )
            for item in (raw.get("turn") or {}).get("items") or []:
                view.put(item)
            sessions[view.session_id] = view
        pending = {
            str(a.get("approvalId")): dict(a)
            for a in snapshot.get("approvals") or []
            if isinstance(a, dict)
        }
        return cls(
            conversation=dict(snapshot.get("conversation") or {}),
            sessions=sessions,
            seq=seq,
            approvals=pending,
        )

    @property
    def conversation_id(self) -> str:
        return str(self.conversation.get("conversationId", ""))

    @property
    def root_session_id(self) -> str:
        root = self.conversation.get("rootSessionId")
        if isinstance(root, str) and root:
            return root
        for session in self.sessions.values():
            if session.parent_id is None:
                return session.session_id
        return ""

    @property
    def root(self) -> SessionView | None:
        return self.sessions.get(self.root_session_id)

    def children(self, session_id: str) -> list[SessionView]:
        return [s for s in self.sessions.values() if s.parent_id == session_id]

    def apply(self, method: str, params: dict[str, Any]) -> bool:
        """Fold one notification in. True when the rendering changed."""
        seq = params.get("seq")
        if isinstance(seq, int):
            if seq <= self.seq:
                return False
            self.seq = seq
        changed = self._apply(method, params)
        if changed:
            self.version += 1
        return changed

    def _session(self, params: dict[str, Any]) -> SessionView | None:
        sid = params.get("sessionId")
        return self.sessions.get(sid) if isinstance(sid, str) else None

    def _apply(self, method: str, params: dict[str, Any]) -> bool:
        if method == "conversation/updated":
            self.conversation.update(params.get("conversation") or {})
            return True
        if method == "conversation/deleted":
            self.deleted = True
            return True
        if method in ("session/started", "session/updated"):
            info = params.get("session") or {}
            sid = str(info.get("sessionId", ""))
            if sid in self.sessions:
                self.sessions[sid].info.update(info)
            else:
                self.sessions[sid] = SessionView(info=dict(info))
            return True
        if method == "approval/requested":
            self.approvals[str(params.get("approvalId"))] = dict(params)
            return True
        if method == "approval/resolved":
            return self.approvals.pop(str(params.get("approvalId")), None) is not None
        session = self._session(params)
        if session is None:
            return False
        if method in ("item/started", "item/completed"):
            session.put(params.get("item") or {})
            return True
        if method == "item/delta":
            index = session.find(str(params.get("itemId")))
            if index is None:
                return False
            item = session.items[index]
            key = str(params.get("field") or "text")
            item[key] = str(item.get(key) or "") + str(params.get("delta") or "")
            return True
        if method == "item/discarded":
            index = session.find(str(params.get("itemId")))
            if index is not None:
                del session.items[index]
            return index is not None
        if method == "inbox/updated":
            session.inbox = list(params.get("inputs") or [])
            return True
        if method == "plan/updated":
            plan = params.get("plan")
            session.plan = plan if isinstance(plan, dict) else None
            return True
        if method == "usage/updated":
            session.usage = params.get("usage")
            return True
        if method == "compaction/started":
            session.compacting = True
            return True
        if method in ("compaction/completed", "compaction/failed"):
            session.compacting = False
            return True
        return False
