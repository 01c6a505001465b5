"""The approval prompt, docked above the composer: a tool call waits for the user's answer.

It shows the oldest pending approval (docs/protocol.md, `approval/requested`) the user has not
answered here yet. Its keys are single letters, so it only acts while it has focus: the app
focuses it when it appears unless the user is typing in the composer (Ctrl+O reaches it then),
so that a word being typed never answers it. A prompt that just appeared answers nothing until
`ARM_DELAY` has passed (or Ctrl+O moved to it): the letters typed in that moment were meant for
the message, so they go to the composer (docs/design.md, "Approvals ignore typed-ahead keys").
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, Label, Static

from openvaala_server.client.view import Approval
from openvaala_tui import format as fmt
from openvaala_tui.diff_render import changes_text, changes_title

KEYS_HINT = (
    "y allow once · a allow for this conversation · n deny · d deny with a message · Esc interrupt"
)
# When nothing can be remembered for the call (docs/security.md, "Approvals"): no `a`.
ONCE_ONLY_HINT = "y allow once · n deny · d deny with a message · Esc interrupt"
WAIT_HINT = "keys you type now go to your message · the answer keys work in a moment"
MESSAGE_HINT = "the message the model receives · Enter denies with it · Esc goes back"


class DenyMessage(Input):
    """Where the user types why the call is denied."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Back")]

    class Cancelled(Message):
        pass

    def action_cancel(self) -> None:
        self.post_message(self.Cancelled())


class ApprovalPrompt(Vertical, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('allow')", "Allow once"),
        Binding("a", "answer('allow_conversation')", "Allow for conversation"),
        Binding("n", "answer('deny')", "Deny"),
        Binding("d", "deny_with_message", "Deny with message"),
    ]

    # How long a new prompt ignores its keys: about a human reaction time, so that a key
    # already on its way when the prompt appeared cannot answer it.
    ARM_DELAY: ClassVar[float] = 0.7

    class TypedAhead(Message):
        """`text` was typed before the prompt could answer: it belongs to the composer."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Answered(Message):
        """The user answered `approval_id` with `decision` (and, for a denial, `message`)."""

        def __init__(self, approval_id: str, decision: str, message: str | None) -> None:
            super().__init__()
            self.approval_id = approval_id
            self.decision = decision
            self.message = message

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.approval: Approval | None = None
        self.armed = False
        self._arm_timer: Timer | None = None
        self.display = False  # hidden from the first layout on, not after it (start-up time)

    def compose(self) -> ComposeResult:
        yield Label("", id="approval-title")
        yield Static("", id="approval-body")
        yield Static("", id="approval-diff")
        yield Label(KEYS_HINT, id="approval-hint", classes="hint")
        message = DenyMessage(placeholder="why not? (optional)", id="approval-message")
        message.display = False
        yield message

    @property
    def writing_message(self) -> bool:
        return bool(self.query_one(DenyMessage).display)

    def show_approval(self, approval: Approval, agent: str | None, waiting: int) -> None:
        """Show `approval` (`agent`: the subagent asking; `waiting`: how many more wait)."""
        if self.approval is None or self.approval.approval_id != approval.approval_id:
            self._close_message()
            self._disarm()
        self.approval = approval
        who = f"Subagent {agent}" if agent else "The agent"
        title = f"{who} asks to use {approval.tool}"
        if waiting:
            title += f"   ({waiting} more waiting)"
        self.query_one("#approval-title", Label).update(Text(title))
        body = Text()
        what = approval.summary or fmt.tool_command({"arguments": approval.arguments})
        body.append(what, style="bold")
        if approval.reason:
            body.append(f"\n{approval.reason}", style="italic")
        # What `a` would allow, before the user presses it.
        scope = approval.grant_text()
        body.append(f"\n{'a: ' if approval.grantable else ''}{scope}", style="dim")
        self.query_one("#approval-body", Static).update(body)
        self._show_diffs(approval)
        if not self.writing_message:
            self.query_one("#approval-hint", Label).update(self._hint())
        self.refresh_bindings()
        self.display = True
        self._show_reach()

    def _show_diffs(self, approval: Approval) -> None:
        """What a file-changing call would change, as the transcript draws a result's diff; the
        pane scrolls past its height (docs/protocol.md, approval/requested `diffs`)."""
        pane = self.query_one("#approval-diff", Static)
        diffs = [{"diff": diff.get("unified") or ""} for diff in approval.diffs]
        pane.display = bool(diffs)
        if not diffs:
            return
        pane.border_title = changes_title(diffs)
        pane.update(changes_text(diffs))
        pane.scroll_home(animate=False)

    # Unfocused, the prompt's letters would go to the composer: its border says how to reach it.
    def on_focus(self) -> None:
        self._mark_focus()

    def on_blur(self) -> None:
        self._mark_focus()

    def on_descendant_focus(self) -> None:
        self._mark_focus()

    def on_descendant_blur(self) -> None:
        self._mark_focus()

    def _mark_focus(self) -> None:
        self.call_after_refresh(self._show_reach)

    def _show_reach(self) -> None:
        self.border_subtitle = None if self.has_focus_within else "Ctrl+O to answer"

    def _disarm(self) -> None:
        if self._arm_timer is not None:
            self._arm_timer.stop()
            self._arm_timer = None
        if self.ARM_DELAY <= 0:
            self.armed = True
            return
        self.armed = False
        self._arm_timer = self.set_timer(self.ARM_DELAY, self.arm)

    def arm(self) -> None:
        """Let the answer keys act (the delay passed, or the user moved to the prompt)."""
        if self._arm_timer is not None:
            self._arm_timer.stop()
            self._arm_timer = None
        self.armed = True
        if not self.writing_message:
            self.query_one("#approval-hint", Label).update(self._hint())

    def on_key(self, event: events.Key) -> None:
        """Before it is armed, a typed character goes to the message being written, not to
        the prompt's bindings (checked after the key leaves this widget)."""
        if self.armed or self.writing_message or not event.is_printable:
            return
        event.stop()
        event.prevent_default()
        self.post_message(self.TypedAhead(event.character or ""))

    def clear(self) -> None:
        if self._arm_timer is not None:
            self._arm_timer.stop()
            self._arm_timer = None
        self.approval = None
        self._close_message()
        self.display = False

    def action_answer(self, decision: str) -> None:
        if self.approval is None:
            return
        if decision == "allow_conversation" and not self.approval.grantable:
            # Nothing would be remembered: say so rather than answer something it is not.
            self.notify(self.approval.grant_text(), severity="warning")
            return
        self.post_message(self.Answered(self.approval.approval_id, decision, None))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer offers `a` only when something would be granted."""
        if action == "answer" and parameters == ("allow_conversation",):
            return self.approval is None or self.approval.grantable
        return True

    def _hint(self) -> str:
        if not self.armed:
            return WAIT_HINT
        return KEYS_HINT if self.approval is None or self.approval.grantable else ONCE_ONLY_HINT

    def action_deny_with_message(self) -> None:
        if self.approval is None:
            return
        field = self.query_one(DenyMessage)
        field.display = True
        self.query_one("#approval-hint", Label).update(MESSAGE_HINT)
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.approval is None:
            return
        message = event.value.strip() or None
        approval_id = self.approval.approval_id
        self._close_message()
        self.post_message(self.Answered(approval_id, "deny", message))

    def on_deny_message_cancelled(self, event: DenyMessage.Cancelled) -> None:
        event.stop()
        self._close_message()
        self.focus()

    def _close_message(self) -> None:
        field = self.query_one(DenyMessage)
        field.value = ""
        field.display = False
        self.query_one("#approval-hint", Label).update(self._hint())
