"""Modal screens: pickers, prompts, confirmations, the conversation list, the agents tree."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, ClassVar, Literal, TypeAlias

from rich.text import Text
from textual import _widget_navigation, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Switch
from textual.widgets.option_list import Option

from openvaala_tui import errors
from openvaala_tui import format as fmt

if TYPE_CHECKING:
    from openvaala_server.protocol.payloads import ConversationSummary, SessionInfo

Choice = tuple[str, str]  # (value, label)


class EdgeOptionList(OptionList):
    """Up and Down stop at the ends: a picker whose Down wrapped to the top looked as if the
    list had changed under the user."""

    def action_cursor_down(self) -> None:
        self._step(1)

    def action_cursor_up(self) -> None:
        self._step(-1)

    def _step(self, direction: Literal[-1, 1]) -> None:
        if self.highlighted is None:
            self.highlighted = _widget_navigation.find_first_enabled(self.options)
            return
        found = _widget_navigation.find_next_enabled_no_wrap(
            self.options, anchor=self.highlighted, direction=direction
        )
        if found is not None:
            self.highlighted = found


class ListPicker(ModalScreen[str | None]):
    """Pick one of `choices`; Esc cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(
        self,
        title: str,
        choices: list[Choice],
        *,
        empty: str = "Nothing to pick",
        current: str | None = None,
    ) -> None:
        super().__init__(classes="modal")
        self.title_text = title
        self.choices = choices
        self.empty = empty
        self.current = current  # the value highlighted first (else the last one)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            if self.choices:
                yield EdgeOptionList(
                    *[Option(Text(label), id=value) for value, label in self.choices],
                    id="picker-list",
                )
            else:
                yield Label(self.empty, classes="hint")

    def on_mount(self) -> None:
        if self.choices:
            options = self.query_one(OptionList)
            values = [value for value, _label in self.choices]
            last = len(values) - 1  # the newest, in the lists of messages
            options.highlighted = values.index(self.current) if self.current in values else last
            options.focus()

    @on(OptionList.OptionSelected)
    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "dismiss(False)", "No"),
        Binding("y", "dismiss(True)", "Yes"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__(classes="modal")
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="dialog-title")
            with Horizontal(classes="buttons"):
                yield Button("Yes (y)", id="yes", variant="error")
                yield Button("No (n)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class PromptScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, value: str = "", placeholder: str = "") -> None:
        super().__init__(classes="modal")
        self.title_text = title
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            yield Input(self.value, placeholder=self.placeholder, id="prompt-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


ConversationLoader: TypeAlias = "Callable[[str, bool], Awaitable[list[ConversationSummary]]]"


class ResumeScreen(ModalScreen[str | None]):
    """The conversation list: type to search, toggle archived, Enter opens."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel"),
        Binding("ctrl+a", "toggle_archived", "Archived", priority=True),
    ]

    def __init__(self, load: ConversationLoader) -> None:
        super().__init__(classes="modal")
        self.load = load

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Resume a conversation", classes="dialog-title")
            with Horizontal(classes="resume-bar"):
                yield Input(placeholder="search…", id="resume-search")
                yield Label(" archived (^a) ")
                yield Switch(False, id="resume-archived")
            yield OptionList(id="resume-list")

    def on_mount(self) -> None:
        self.reload()

    def action_toggle_archived(self) -> None:
        switch = self.query_one(Switch)
        switch.value = not switch.value

    def on_input_changed(self, event: Input.Changed) -> None:
        self.reload()

    def on_switch_changed(self, event: Switch.Changed) -> None:
        self.reload()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the search opens the top result (the one highlighted)."""
        options = self.query_one(OptionList)
        index = options.highlighted
        if index is None:
            return
        option = options.get_option_at_index(index)
        if option.id and not option.disabled:
            self.dismiss(option.id)

    @work(exclusive=True)
    async def reload(self) -> None:
        search = self.query_one(Input).value.strip()
        archived = self.query_one(Switch).value
        try:
            conversations = await self.load(search, archived)
        except Exception as exc:  # shown, never fatal
            self.notify(errors.describe(exc), severity="error")
            return
        options = self.query_one(OptionList)
        options.clear_options()
        titles = {str(c.get("conversationId")): str(c.get("title") or "") for c in conversations}
        for conv in conversations:
            options.add_option(
                Option(conversation_label(conv, titles), id=str(conv.get("conversationId")))
            )
        if conversations:
            options.highlighted = 0
        else:
            options.add_option(Option(Text("(no conversation)", style="dim"), disabled=True))

    @on(OptionList.OptionSelected)
    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)


def conversation_label(conv: ConversationSummary, titles: dict[str, str]) -> Text:
    """One line of the conversation list: title, when, how much, where, and where it came
    from (a fork or a rewind of another conversation, named when it is in the list)."""
    label = Text()
    label.append(str(conv.get("title") or "Untitled"), style="bold")
    when = fmt.local_time(str(conv.get("updatedAt") or conv.get("createdAt") or ""))
    if when:
        label.append(f"  {when}")
    messages = conv.get("messageCount")
    if isinstance(messages, int):
        label.append(f"  {messages} message{'' if messages == 1 else 's'}", style="dim")
    label.append(f"  {conv.get('cwd') or ''}", style="dim")
    origin = conv.get("forkedFrom")
    if isinstance(origin, dict) and origin.get("conversationId"):
        source = str(origin["conversationId"])
        name = titles.get(source) or source[:8]
        how = "rewound from" if origin.get("kind") == "rewind" else "fork of"
        label.append(f"  ({how} “{name}”)", style="italic")
    if conv.get("status") not in (None, "idle"):
        label.append(f"  [{conv.get('status')}]")
    return label


class AgentsScreen(ModalScreen[tuple[str, str] | None]):
    """The session tree: Enter/f follows one, i interrupts it, m messages it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close"),
        Binding("f", "choose('follow')", "Follow"),
        Binding("i", "choose('interrupt')", "Interrupt"),
        Binding("m", "choose('message')", "Message"),
    ]

    def __init__(self, sessions: list[SessionInfo], following: str | None) -> None:
        super().__init__(classes="modal")
        self.sessions = sessions
        self.following = following

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Agents  (f follow · i interrupt · m message)", classes="dialog-title")
            yield OptionList(*[self._option(s) for s in tree_order(self.sessions)], id="agents")

    def set_sessions(self, sessions: list[SessionInfo]) -> None:
        """Redraw with fresh sessions (one started, one changed status), keeping the cursor."""
        self.sessions = sessions
        if not self.is_mounted:
            return
        options = self.query_one(OptionList)
        highlighted = options.highlighted
        current = options.get_option_at_index(highlighted).id if highlighted is not None else None
        ordered = tree_order(sessions)
        options.clear_options()
        options.add_options([self._option(s) for s in ordered])
        ids = [str(s.get("sessionId")) for s in ordered]
        if current in ids:
            options.highlighted = ids.index(current)
        elif ids:
            options.highlighted = 0

    def _option(self, session: SessionInfo) -> Option:
        label = Text("  " * int(session.get("depth") or 0))
        marker = "▶ " if session.get("sessionId") == self.following else "  "
        label.append(marker)
        label.append(str(session.get("agent") or "agent"), style="bold")
        title = session.get("title")
        if title:
            label.append(f"  {fmt.first_line(str(title), 50)}")
        label.append(f"  [{session.get('status') or 'idle'}]", style="dim")
        return Option(label, id=str(session.get("sessionId")))

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def action_choose(self, action: str) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is None:
            return
        option = options.get_option_at_index(options.highlighted)
        if option.id:
            self.dismiss((action, option.id))

    @on(OptionList.OptionSelected)
    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.dismiss(("follow", event.option.id))


def tree_order(sessions: list[SessionInfo]) -> list[SessionInfo]:
    """Parents before their children, depth-first, siblings in the given order."""
    children: dict[str | None, list[SessionInfo]] = {}
    ids = {s["sessionId"] for s in sessions}
    for session in sessions:
        parent = session.get("parentSessionId")
        children.setdefault(parent if parent in ids else None, []).append(session)
    ordered: list[SessionInfo] = []

    def walk(parent: str | None, depth: int) -> None:
        for session in children.get(parent, []):
            ordered.append({**session, "depth": session.get("depth", depth)})
            walk(session["sessionId"], depth + 1)

    walk(None, 0)
    return ordered
