"""`/init`, `/memory`, `/remember` and the `#` prefix: the TUI's side of memory and project
instructions (docs/protocol.md, "Memory" and conversation/init)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, TextArea

from openvaala_server.protocol import methods
from openvaala_tui.actions import CommandsMixin

if TYPE_CHECKING:
    from openvaala_server.domain.memory import Scope as MemoryScope

SCOPES = ("project", "user")
_SCOPE_NAMED: dict[str, MemoryScope] = {"project": "project", "user": "user"}


def memory_note(text: str) -> str | None:
    """The note of a message written `# note` (one `#`: `## heading` stays a message)."""
    stripped = text.strip()
    if not stripped.startswith("#") or stripped.startswith("##"):
        return None
    return stripped[1:].strip() or None


def scope_and_text(arg: str) -> tuple[MemoryScope, str]:
    """`user TEXT` or `project TEXT` name the file; otherwise the project's."""
    head, _, rest = arg.strip().partition(" ")
    scope = _SCOPE_NAMED.get(head)
    if scope is not None:
        return scope, rest.strip()
    return "project", arg.strip()


class MemoryEditor(ModalScreen[str | None]):
    """A memory file's text to edit: Ctrl+S saves, Esc leaves it as it was."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel"),
        Binding("ctrl+s", "save", "Save", priority=True),
    ]

    def __init__(self, path: str, text: str) -> None:
        super().__init__(classes="modal")
        self.path = path
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"{self.path} — Ctrl+S saves, Esc cancels", classes="dialog-title")
            yield TextArea(self.text, id="memory-text")

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)


class MemoryCommands(CommandsMixin):
    async def cmd_init(self, arg: str) -> None:
        """Ask the agent to write or improve the repository's AGENTS.md."""
        await self.call(methods.CONVERSATION_INIT, {"conversationId": self.cid})

    async def cmd_remember(self, arg: str) -> None:
        scope, text = scope_and_text(arg)
        if not text:
            self.notify("/remember [user] TEXT, or start a message with #", severity="warning")
            return
        saved = await self.call(
            methods.MEMORY_REMEMBER, {"conversationId": self.cid, "scope": scope, "text": text}
        )
        await self.local_notice(f"Remembered in {saved['path']}: {text}")

    async def cmd_memory(self, arg: str) -> None:
        """`/memory` shows both memory files; `/memory edit [user]` opens one to edit."""
        words = arg.split()
        files = (await self.call(methods.MEMORY_READ, {"conversationId": self.cid}))["files"]
        if words and words[0] == "edit":
            scope = (_SCOPE_NAMED.get(words[1]) if len(words) > 1 else None) or "project"
            chosen = next(f for f in files if f["scope"] == scope)
            edited = await self.push_screen_wait(MemoryEditor(chosen["path"], chosen["text"]))
            if edited is not None and edited != chosen["text"]:
                await self.call(
                    methods.MEMORY_WRITE,
                    {"conversationId": self.cid, "scope": scope, "text": edited},
                )
                await self.local_notice(f"Saved {chosen['path']}.")
            return
        lines = []
        for file in files:
            body = file["text"].rstrip() if file["exists"] else "(empty: # TEXT adds a note)"
            lines.append(f"Memory ({file['scope']}): {file['path']}\n{body}")
        lines.append("/memory edit [user] opens one to edit.")
        await self.local_notice("\n\n".join(lines))
