"""The multi-line composer: Enter sends (steer while a turn runs), Tab queues, Ctrl+G jumps."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

NEWLINE_KEYS = ("shift+enter", "ctrl+j", "newline")
SEND_KEYS = {"enter": "steer", "tab": "queue", "alt+enter": "queue", "ctrl+g": "jump"}


class Composer(TextArea):
    # Handled in `_on_key` (before TextArea inserts them); listed here for the footer.
    BINDINGS: ClassVar[list[BindingType]] = [
        # The footer has 80 columns at least: /help lists the rest (steer, newline, ...).
        Binding("enter", "submit('steer')", "Send"),
        Binding("tab", "submit('queue')", "Queue"),
        Binding("ctrl+g", "submit('jump')", "Jump", show=False),
        Binding("ctrl+j", "newline", "Newline", show=False),
    ]

    class Submitted(Message):
        """The user sent `text` with `mode` (steer | queue | jump)."""

        def __init__(self, composer: Composer, text: str, mode: str) -> None:
            super().__init__()
            self.composer = composer
            self.text = text
            self.mode = mode

        @property
        def control(self) -> Composer:
            return self.composer

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.editing_input: str | None = None  # the waiting input being edited, if any

    @property
    def is_empty(self) -> bool:
        return not self.text.strip()

    def set_text(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def action_submit(self, mode: str) -> None:
        if not self.is_empty:
            self.post_message(self.Submitted(self, self.text, mode))

    def action_newline(self) -> None:
        self.insert("\n")

    async def _on_key(self, event: events.Key) -> None:
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        mode = SEND_KEYS.get(event.key)
        if mode is not None and not (event.key == "tab" and self.is_empty):
            event.stop()
            event.prevent_default()
            if not self.is_empty:
                self.post_message(self.Submitted(self, self.text, mode))
            return
        await super()._on_key(event)
