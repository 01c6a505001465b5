"""The question a quit asks while a turn runs: stop it, or leave it running in the daemon
(docs/design.md, "Ctrl+C and quitting the TUI")."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label

QuitChoice = Literal["stop", "leave"]  # None: not quitting after all


class QuitScreen(ModalScreen[QuitChoice | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "dismiss('stop')", "Stop it"),
        Binding("l", "dismiss('leave')", "Leave it running"),
        Binding("escape,c", "dismiss(None)", "Cancel"),
    ]

    def __init__(self, running: int) -> None:
        super().__init__(classes="modal")
        self.running = running

    def compose(self) -> ComposeResult:
        what = "A turn is" if self.running == 1 else f"{self.running} turns are"
        with Vertical(classes="dialog"):
            yield Label(f"{what} still running. Quit and…", classes="dialog-title")
            with Horizontal(classes="buttons"):
                yield Button("Stop it (s)", id="stop", variant="error")
                yield Button("Leave it running (l)", id="leave", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        # Enter stops, as Ctrl+C does: what Codex and Claude Code users expect of a quit.
        self.query_one("#stop", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        chosen = event.button.id
        self.dismiss("stop" if chosen == "stop" else "leave" if chosen == "leave" else None)
