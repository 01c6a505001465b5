"""The status bar: title, agent/model, turn state, retry, context meter, connection."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label

from openvaala_tui import format as fmt
from openvaala_tui.state import ConversationView

LEVELS = ("ok", "warn", "full", "unknown")


class StatusBar(Horizontal):
    """Refreshed after most notifications: only the labels whose text or state changed are
    touched, since updating a label redoes the screen's layout."""

    def compose(self) -> ComposeResult:
        yield Label("", id="status-title")
        yield Label("", id="status-model")
        yield Label("", id="status-state")
        yield Label("", id="status-retry")
        yield Label("", id="status-meter")
        yield Label("", id="status-connection")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: dict[str, str] = {}  # label selector → the text it shows

    def refresh_from(self, view: ConversationView, session_id: str | None) -> None:
        session = view.sessions.get(session_id or view.root_id)
        title = view.title
        if session is not None and session_id and session_id != view.root_id:
            title = f"{title} › {session.info.get('title') or session.info.get('agent')}"
        self._set("#status-title", title)
        info: dict[str, Any] = session.info if session else {}
        agent = info.get("agent") or view.conversation.get("agent") or "?"
        model = info.get("model") or view.conversation.get("model") or "?"
        self._set("#status-model", f"{agent} · {model}")
        state = "—"
        retry = ""
        usage: dict[str, Any] = {}
        if session is not None:
            state = fmt.turn_state(session.status, session.running, session.compacting)
            retry = fmt.retry_text(session.retry) if session.retry else ""
            usage = session.usage
        self._set("#status-state", state)
        self._set("#status-retry", retry, display=bool(retry))
        meter = self._set("#status-meter", fmt.meter(usage) if usage else "")
        level = fmt.meter_level(usage)
        for name in LEVELS:
            meter.set_class(level == name, f"-{name}")
        reconnecting = view.connection != "connected"
        self._set(
            "#status-connection", "reconnecting…" if reconnecting else "", display=reconnecting
        )

    def _set(self, selector: str, text: str, display: bool | None = None) -> Label:
        label = self.query_one(selector, Label)
        if self._shown.get(selector) != text:
            self._shown[selector] = text
            label.update(text)
        if display is not None and label.display != display:
            label.display = display
        return label
