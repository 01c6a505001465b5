"""The status bar: title, agent/model, turn state, retry, context meter, connection."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Label

from openvaala_server.client.view import ConversationView
from openvaala_tui import format as fmt
from openvaala_tui.context_format import gauge_suffix
from openvaala_tui.errors import START_DAEMON

if TYPE_CHECKING:
    from collections.abc import Mapping

    from openvaala_server.protocol.payloads import RetryScheduledNote, Usage

LEVELS = ("ok", "warn", "full", "unknown")


class StatusBar(Vertical):
    """Refreshed after most notifications: only the labels whose text or state changed are
    touched, since updating a label redoes the screen's layout. A retry and a lost daemon get
    a line of their own under it: their reason and what to do must fit in 80 columns."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="status-line"):
            yield Label("", id="status-machine")
            yield Label("", id="status-title")
            yield Label("", id="status-model")
            yield Label("", id="status-state")
            yield Label("", id="status-meter")
        yield Label("", id="status-retry")
        yield Label("", id="status-connection")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: dict[str, str] = {}  # label selector → the text it shows
        self._retry: RetryScheduledNote | None = None  # the retry/scheduled shown, counted down
        self._retry_due = 0.0  # monotonic time of that retry
        self._ticker: Timer | None = None
        self.clock: Callable[[], float] = time.monotonic  # a fixed one in appearance tests
        # What a refresh asked for before the labels were there (a note can arrive before the
        # bar is mounted): drawn once they are, instead of failing the app's worker.
        self._early: tuple[ConversationView, str | None] | None = None
        self.machine: str | None = None  # the remote machine attached to (docs/remote.md)

    def on_mount(self) -> None:
        self._ticker = self.set_interval(1.0, self._tick, pause=True)
        if self._early is not None:
            self.call_after_refresh(self.refresh_from, *self._early)

    def _tick(self) -> None:
        """The countdown of the retry shown: one step a second until it is due."""
        if self._retry is None:
            return
        self._set("#status-retry", fmt.retry_text(self._retry, self._remaining()))

    def _remaining(self) -> float:
        return max(0.0, math.ceil(self._retry_due - self.clock()))

    def _follow_retry(self, retry: RetryScheduledNote | None) -> str:
        if retry is not self._retry:  # a new retry/scheduled (or none any more)
            self._retry = retry
            delay = float(retry.get("delaySeconds") or 0) if retry else 0.0
            self._retry_due = self.clock() + delay
            if self._ticker is not None:
                if retry is not None:
                    self._ticker.reset()
                    self._ticker.resume()
                else:
                    self._ticker.pause()
        if retry is None:
            return ""
        return fmt.retry_text(retry, self._remaining())

    def refresh_from(self, view: ConversationView, session_id: str | None) -> None:
        if not self.query("#status-connection"):  # composed last: not all labels are there yet
            self._early = (view, session_id)
            return
        self._early = None
        session = view.sessions.get(session_id or view.root_id)
        title = view.title
        if session is not None and session_id and session_id != view.root_id:
            title = f"{title} › {session.info.get('title') or session.info.get('agent')}"
        self._set(
            "#status-machine", f"on {self.machine}" if self.machine else "", bool(self.machine)
        )
        self._set("#status-title", title)
        info: Mapping[str, object] = session.info if session else {}
        agent = info.get("agent") or view.conversation.get("agent") or "?"
        model = info.get("model") or view.conversation.get("model") or "?"
        # A model the user chose stays when the agent changes; the agent's own comes with it.
        chosen = " (chosen)" if info.get("modelChosen") else ""
        self._set("#status-model", f"{agent} · {model}{chosen}")
        state = "—"
        retry = ""
        usage: Usage | None = None
        if session is not None:
            state = fmt.turn_state(session.status, session.running, session.compacting)
            retry = self._follow_retry(cast("RetryScheduledNote | None", session.retry))
            # The view keeps the last `usage/updated` (or the snapshot's) as it came.
            usage = cast("Usage", session.usage) if session.usage else None
        else:
            self._follow_retry(None)
        self._set("#status-state", state)
        self._set("#status-retry", retry, display=bool(retry))
        meter = self._set("#status-meter", fmt.meter(usage) + gauge_suffix(usage) if usage else "")
        level = fmt.meter_level(usage) if usage else "unknown"
        for name in LEVELS:
            meter.set_class(level == name, f"-{name}")
        reconnecting = view.connection != "connected"
        why = f" ({view.connection_message})" if view.connection_message else ""
        lost = (
            f"ssh to {self.machine} lost, reconnecting…{why}"
            if self.machine
            else f"daemon gone, reconnecting… start it: {START_DAEMON}"
        )
        self._set("#status-connection", lost if reconnecting else "", display=reconnecting)

    def _set(self, selector: str, text: str, display: bool | None = None) -> Label:
        label = self.query_one(selector, Label)
        if self._shown.get(selector) != text:
            self._shown[selector] = text
            label.update(text)
        if display is not None and label.display != display:
            label.display = display
        return label
