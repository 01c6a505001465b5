"""One widget per transcript item, updated in place as the item streams and completes."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from openvaala_tui import format as fmt
from openvaala_tui.state import Item

OUTPUT_LINES = 200  # lines of tool output kept on screen (the full output stays on the item)
ENDED = ("interrupted", "failed")


def mark_status(widget: Widget, status: str) -> None:
    for name in ENDED:
        widget.set_class(status == name, f"-{name}")
    if status in ENDED:
        widget.border_subtitle = status


class ItemWidget(Widget):
    """Base: `item` is the latest known state of the item shown."""

    DEFAULT_CSS = "ItemWidget { height: auto; }"

    def __init__(self, item: Item) -> None:
        super().__init__(classes="item")
        self.item = item
        self.item_id = str(item.get("itemId"))

    async def append(self, field: str, delta: str) -> None:
        """A streamed delta (the item itself was already updated by the state)."""

    async def complete(self, item: Item) -> None:
        self.item = item
        mark_status(self, str(item.get("status") or ""))


class UserMessage(ItemWidget):
    """The user's message; in a subagent's transcript, what its parent agent sent it; in a
    parent's, a subagent's report."""

    def compose(self) -> ComposeResult:
        origin = self.item.get("origin", "user")
        prefix = ""
        if origin == "subagent":
            prefix = "↳ report from a subagent\n"
        elif self.item.get("fromSessionId"):
            prefix = "↳ from the parent agent\n"
        yield Static(Text(prefix + str(self.item.get("text") or "")), classes="user-text")

    def on_mount(self) -> None:
        self.add_class("user")
        if self.item.get("origin", "user") == "subagent":
            self.border_title = "subagent"
            self.add_class("-report")
        elif self.item.get("fromSessionId"):
            self.border_title = "parent agent"
        else:
            self.border_title = "you"


class AgentMessage(ItemWidget):
    """Agent text as Markdown, streamed with `Markdown.get_stream`."""

    def __init__(self, item: Item) -> None:
        super().__init__(item)
        self._shown = str(item.get("text") or "")
        self._stream: MarkdownStream | None = None

    def compose(self) -> ComposeResult:
        yield Markdown(self._shown, classes="agent-text")

    def on_mount(self) -> None:
        self.add_class("agent")
        mark_status(self, str(self.item.get("status") or ""))

    async def append(self, field: str, delta: str) -> None:
        if field != "text" or not delta:
            return
        if self._stream is None:
            self._stream = Markdown.get_stream(self.query_one(Markdown))
        self._shown += delta
        await self._stream.write(delta)

    async def complete(self, item: Item) -> None:
        await super().complete(item)
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        final = str(item.get("text") or "")
        if final != self._shown:
            self._shown = final
            await self.query_one(Markdown).update(final)

    async def on_unmount(self) -> None:
        if self._stream is not None:
            await self._stream.stop()


class Reasoning(ItemWidget):
    """The model's reasoning, collapsed by default."""

    def compose(self) -> ComposeResult:
        with Collapsible(title=self._title(), collapsed=True):
            yield Static(Text(str(self.item.get("text") or "")), classes="reasoning-text")

    def on_mount(self) -> None:
        self.add_class("reasoning")
        mark_status(self, str(self.item.get("status") or ""))

    def _title(self) -> str:
        if self.item.get("status") == "in_progress":
            return "Thinking…"
        return "Thought: " + fmt.first_line(str(self.item.get("text") or ""), 60)

    async def append(self, field: str, delta: str) -> None:
        self.query_one(".reasoning-text", Static).update(Text(str(self.item.get("text") or "")))

    async def complete(self, item: Item) -> None:
        await super().complete(item)
        self.query_one(".reasoning-text", Static).update(Text(str(item.get("text") or "")))
        self.query_one(Collapsible).title = self._title()


class ToolBlock(ItemWidget):
    """A tool call and, once it runs, its result: status, command, collapsible live output."""

    def __init__(self, item: Item) -> None:
        super().__init__(item)
        self.call: Item | None = item if item.get("type") == "tool_call" else None
        self.result: Item | None = item if item.get("type") == "tool_result" else None
        self.call_id = str(item.get("callId") or "")

    @property
    def status(self) -> str:
        return fmt.tool_status(self.call, self.result)

    def compose(self) -> ComposeResult:
        yield Static(self._header(), classes="tool-header")
        with Collapsible(title=self._output_title(), collapsed=True):
            yield Static(Text(self._output()), classes="tool-output")

    def on_mount(self) -> None:
        self.add_class("tool")
        self._restyle()

    def attach_result(self, result: Item) -> None:
        self.result = result
        self._refresh()

    def detach_result(self) -> None:
        self.result = None
        self._refresh()

    async def append(self, field: str, delta: str) -> None:
        self._refresh()

    async def complete(self, item: Item) -> None:
        if item.get("type") == "tool_result":
            self.result = item
        else:
            self.call = item
        self._refresh()

    def _refresh(self) -> None:
        if not self.is_mounted:
            return
        self.query_one(".tool-header", Static).update(self._header())
        self.query_one(".tool-output", Static).update(Text(self._output()))
        self.query_one(Collapsible).title = self._output_title()
        self._restyle()

    def _restyle(self) -> None:
        status = self.status
        for name in ("pending", "running", "done", "error", "interrupted", "failed"):
            self.set_class(status == name, f"-{name}")

    def _header(self) -> Text:
        icons = {"pending": "…", "running": "⟳", "done": "✓", "error": "✗"}
        source = self.call or self.result or {}
        status = self.status
        header = Text()
        header.append(f"{icons.get(status, '■')} ", style="bold")
        header.append(str(source.get("name") or "tool"), style="bold")
        if self.call is not None:
            header.append("  " + fmt.first_line(fmt.tool_command(self.call), 100))
        header.append(f"  [{status}]", style="dim")
        return header

    def _output(self) -> str:
        output = str((self.result or {}).get("output") or "")
        lines = output.splitlines()
        if len(lines) > OUTPUT_LINES:
            lines = [f"… {len(lines) - OUTPUT_LINES} earlier lines", *lines[-OUTPUT_LINES:]]
        return "\n".join(lines)

    def _output_title(self) -> str:
        output = str((self.result or {}).get("output") or "")
        if self.result is None:
            return "output"
        count = len(output.splitlines())
        last = fmt.first_line(output.splitlines()[-1], 60) if count else "(none)"
        truncated = " (truncated)" if self.result.get("truncated") else ""
        lines = "line" if count == 1 else "lines"
        return f"output · {count} {lines}{truncated} · {last}"


class Notice(ItemWidget):
    def compose(self) -> ComposeResult:
        yield Static(Text("ⓘ " + str(self.item.get("text") or "")), classes="notice-text")

    def on_mount(self) -> None:
        self.add_class("notice")
        if self.item.get("kind") in ("error", "turn_failed"):
            self.add_class("-error")


class Summary(ItemWidget):
    """A compaction marker: the history above was summarized; the summary opens on demand."""

    def compose(self) -> ComposeResult:
        with Collapsible(title=fmt.summary_title(self.item), collapsed=True):
            yield Markdown(str(self.item.get("text") or ""))

    def on_mount(self) -> None:
        self.add_class("summary")


class Unknown(ItemWidget):
    def compose(self) -> ComposeResult:
        yield Static(Text(f"[{self.item.get('type')}] {self.item.get('text') or ''}"))


WIDGETS: dict[str, type[ItemWidget]] = {
    "user_message": UserMessage,
    "agent_message": AgentMessage,
    "reasoning": Reasoning,
    "tool_call": ToolBlock,
    "tool_result": ToolBlock,
    "notice": Notice,
    "summary": Summary,
}


def make_item_widget(item: Item) -> ItemWidget:
    return WIDGETS.get(str(item.get("type")), Unknown)(item)
