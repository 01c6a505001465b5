"""`/diff`: what this conversation changed in its working directory, from its checkpoints
(docs/protocol.md, conversation/diff), drawn with the tool results' diff renderer."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from openvaala_server.protocol import methods
from openvaala_tui.actions import CommandsMixin
from openvaala_tui.diff_render import changes_text, changes_title

if TYPE_CHECKING:
    from openvaala_server.domain.diffs import FileDiff


class DiffScreen(ModalScreen[None]):
    """The diff, scrollable; Esc (or q) closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss(None)", "Close")]

    def __init__(self, files: list[FileDiff], note: str) -> None:
        super().__init__(classes="modal")
        self.files = files
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog diff-dialog"):
            title = f"This conversation's changes: {changes_title(self.files)}"
            yield Label(title, classes="dialog-title")
            with VerticalScroll(id="diff-scroll"):
                yield Static(changes_text(self.files), id="diff-text")
            if self.note:
                yield Label(self.note, classes="hint")

    def on_mount(self) -> None:
        self.query_one("#diff-scroll").focus()


class DiffCommands(CommandsMixin):
    async def cmd_diff(self, arg: str) -> None:
        result = await self.call(methods.CONVERSATION_DIFF, {"conversationId": self.cid})
        files = list(result.get("files") or [])
        skipped = [str(s.get("path")) for s in result.get("skipped") or []]
        note = f"Not kept by the checkpoints (too large): {', '.join(skipped)}" if skipped else ""
        if not files:
            await self.local_notice(
                "This conversation has changed no file in its working directory"
                + (f" that the checkpoints kept ({note})." if note else ".")
            )
            return
        await self.push_screen(DiffScreen(files, note))
