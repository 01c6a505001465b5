"""The waiting-input panel: what the user (or a subagent) sent while a turn runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from openvaala_tui import format as fmt

if TYPE_CHECKING:
    from openvaala_server.domain.inbox import InputWire

MODE_LABEL = {"steer": "steer", "queue": "queued", "jump": "next"}


class InboxList(OptionList):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "act('edit')", "Edit"),
        Binding("w,delete", "act('withdraw')", "Withdraw"),
        Binding("s", "act('steer')", "Hand to turn"),
        Binding("j", "act('jump')", "Jump"),
    ]

    def action_act(self, action: str) -> None:
        index = self.highlighted
        if index is None:
            return
        option = self.get_option_at_index(index)
        if option.id:
            self.post_message(InboxPanel.Action(option.id, action))


class InboxPanel(Vertical):
    class Action(Message):
        """`action` (edit | withdraw | steer | jump) on the waiting input `input_id`."""

        def __init__(self, input_id: str, action: str) -> None:
            super().__init__()
            self.input_id = input_id
            self.action = action

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.inputs: list[InputWire] = []
        self.display = False  # hidden from the first layout on, not after it (start-up time)

    def compose(self) -> ComposeResult:
        yield Label("Waiting (^w) · e edit · w withdraw · s to turn · j jump", id="inbox-title")
        yield InboxList(id="inbox-list")

    def set_inputs(self, inputs: list[InputWire]) -> None:
        self.inputs = list(inputs)
        options = self.query_one(InboxList)
        highlighted = options.highlighted
        options.clear_options()
        for inp in self.inputs:
            label = Text()
            label.append(f"{MODE_LABEL.get(str(inp.get('mode')), inp.get('mode'))} ", style="bold")
            if inp.get("origin") == "subagent":
                label.append("(subagent) ", style="italic")
            label.append(fmt.first_line(str(inp.get("text") or ""), 100))
            images = inp.get("images")
            if isinstance(images, list) and images:
                label.append(f"  🖼 {len(images)}", style="dim")
            options.add_option(Option(label, id=str(inp.get("inputId"))))
        if self.inputs:
            options.highlighted = min(highlighted or 0, len(self.inputs) - 1)
        self.display = bool(self.inputs)  # emptied while focused: the app moves the focus

    def text_of(self, input_id: str) -> str:
        for inp in self.inputs:
            if inp.get("inputId") == input_id:
                return str(inp.get("text") or "")
        return ""
