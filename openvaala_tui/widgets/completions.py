"""The completion popup above the composer: slash commands and `@path` mentions."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from openvaala_tui.completion import Completion


class CompletionPopup(OptionList):
    """Never focused: the composer keeps the keyboard and drives it (Up/Down move, Tab or
    Enter take the highlighted one, Esc closes)."""

    can_focus = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.completion: Completion | None = None
        self.display = False

    def show(self, completion: Completion | None) -> None:
        self.completion = completion
        if completion is None:
            self.display = False
            return
        self.clear_options()
        for value, help_text in completion.candidates:
            label = Text(value, style="bold")
            if help_text:
                label.append(f"  {help_text}", style="dim")
            self.add_option(Option(label, id=value))
        self.highlighted = 0
        self.display = True

    def move(self, step: int) -> None:
        count = self.option_count
        if count:
            self.highlighted = ((self.highlighted or 0) + step) % count

    @property
    def chosen(self) -> str | None:
        if self.completion is None or self.highlighted is None:
            return None
        return self.completion.candidates[self.highlighted][0]
