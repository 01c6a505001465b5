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
    def compose(self) -> ComposeResult:
        yield Label("", id="status-title")
        yield Label("", id="status-model")
        yield Label("", id="status-state")
        yield Label("", id="status-retry")
        yield Label("", id="status-meter")
        yield Label("", id="status-connection")

    def refresh_from(self, view: ConversationView, session_id: str | None) -> None:
        session = view.sessions.get(session_id or view.root_id)
        title = view.title
        if session is not None and session_id and session_id != view.root_id:
            title = f"{title} › {session.info.get('title') or session.info.get('agent')}"
        self.query_one("#status-title", Label).update(title)
        info: dict[str, Any] = session.info if session else {}
        agent = info.get("agent") or view.conversation.get("agent") or "?"
        model = info.get("model") or view.conversation.get("model") or "?"
        self.query_one("#status-model", Label).update(f"{agent} · {model}")
        state = "—"
        retry = ""
        usage: dict[str, Any] = {}
        if session is not None:
            state = fmt.turn_state(session.status, session.running, session.compacting)
            retry = fmt.retry_text(session.retry) if session.retry else ""
            usage = session.usage
        self.query_one("#status-state", Label).update(state)
        retry_label = self.query_one("#status-retry", Label)
        retry_label.update(retry)
        retry_label.display = bool(retry)
        meter = self.query_one("#status-meter", Label)
        meter.update(fmt.meter(usage) if usage else "")
        level = fmt.meter_level(usage)
        for name in LEVELS:
            meter.set_class(level == name, f"-{name}")
        connection = self.query_one("#status-connection", Label)
        reconnecting = view.connection != "connected"
        connection.update("reconnecting…" if reconnecting else "")
        connection.display = reconnecting
