"""The multi-line composer: Enter sends (steer while a turn runs), Tab queues, Ctrl+G jumps."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

from openvaala_tui.completion import McpOffers, complete
from openvaala_tui.composer_history import ComposerHistory
from openvaala_tui.widgets.completions import CompletionPopup

NEWLINE_KEYS = ("shift+enter", "ctrl+j", "newline")
POPUP_KEYS = ("tab", "enter", "escape", "up", "down")
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
        self.popup: CompletionPopup | None = None  # set by the app
        self.cwd = "."  # where `@path` completes (the conversation's directory)
        # MCP prompts and resources it completes, as the app last read them (`mcp/list`).
        self.mcp_offers = McpOffers()
        self.user_commands: Path | None = None  # the user's custom commands (set by the app)
        self.local_files = True  # False over --remote: `cwd` is another machine's
        self.past = ComposerHistory()  # Up and Down recall what was sent or cleared

    @property
    def cursor_offset(self) -> int:
        row, column = self.cursor_location
        lines = self.text.split("\n")
        return sum(len(line) + 1 for line in lines[:row]) + column

    def update_completion(self) -> None:
        if self.popup is not None:
            self.popup.show(
                complete(
                    self.text,
                    self.cursor_offset,
                    self.cwd,
                    self.mcp_offers,
                    self.user_commands,
                    local_files=self.local_files,
                )
            )

    def accept_completion(self) -> None:
        """Put the highlighted completion in place of what it completes."""
        popup = self.popup
        if popup is None or popup.completion is None or popup.chosen is None:
            return
        chosen = popup.chosen
        offset = self.cursor_offset
        text = self.text
        more = chosen.endswith("/") and chosen.startswith("@")  # a directory: go on typing
        inserted = chosen if more else chosen + " "
        start = popup.completion.start
        self.load_text(text[:start] + inserted + text[offset:])
        new_offset = start + len(inserted)
        row = text[:start].count("\n") + inserted.count("\n")
        column = new_offset - (text[:start].rfind("\n") + 1)
        self.move_cursor((row, column))
        if more:
            self.update_completion()
        else:
            popup.show(None)

    def _completed_already(self) -> bool:
        popup = self.popup
        if popup is None or popup.completion is None:
            return True
        typed = self.text[popup.completion.start : self.cursor_offset]
        return popup.chosen in (None, typed)

    def _on_text_area_changed(self, event: TextArea.Changed) -> None:
        self.update_completion()

    @property
    def is_empty(self) -> bool:
        return not self.text.strip()

    def set_text(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def action_submit(self, mode: str) -> None:
        if not self.is_empty:
            self._submit(mode)

    def _submit(self, mode: str) -> None:
        """Hand the text to the app and empty the composer at once: what is typed before the
        app has handled it is the next message, never the end of this one (docs/design.md,
        "Typing ahead")."""
        text = self.text
        self.past.record(text)
        self.clear()
        self.post_message(self.Submitted(self, text, mode))

    def discard(self) -> None:
        """Empty the composer (Ctrl+C), keeping the text for Up to bring back."""
        self.past.record(self.text)
        self.clear()

    def _recall(self, key: str) -> bool:
        """Up on the first line shows the previous entry of the history, Down on the last
        line the next one (then what was there before); False when the key moves the cursor."""
        row = self.cursor_location[0]
        if key == "up" and row == 0:
            text = self.past.older(self.text)
        elif key == "down" and row == self.document.line_count - 1:
            text = self.past.newer()
        else:
            return False
        if text is None:
            return False
        self.set_text(text)
        return True

    def restore(self, text: str) -> None:
        """Put back a message that was not sent, before anything typed since."""
        typed = self.text
        self.set_text(f"{text}\n{typed}" if typed.strip() else text)

    def action_newline(self) -> None:
        self.insert("\n")

    async def _on_key(self, event: events.Key) -> None:
        popup = self.popup
        if popup is not None and popup.display and event.key in POPUP_KEYS:
            if event.key in ("tab", "enter") and self._completed_already():
                popup.show(None)  # "/fork" typed in full: Enter sends it
                await self._on_key(event)
                return
            event.stop()
            event.prevent_default()
            if event.key in ("tab", "enter"):
                self.accept_completion()
            elif event.key == "escape":
                popup.show(None)
            else:
                popup.move(-1 if event.key == "up" else 1)
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if event.key in ("up", "down") and self._recall(event.key):
            event.stop()
            event.prevent_default()
            return
        mode = SEND_KEYS.get(event.key)
        if mode is not None and not (event.key == "tab" and self.is_empty):
            event.stop()
            event.prevent_default()
            if not self.is_empty:
                self._submit(mode)
            return
        await super()._on_key(event)
