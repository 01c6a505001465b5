"""One widget per transcript item, updated in place as the item streams and completes."""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.css.query import NoMatches
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from openvaala_server.client.notice_words import notice_text
from openvaala_tui import format as fmt
from openvaala_tui.diff_render import changes_text, changes_title
from openvaala_tui.images import transcript_lines

if TYPE_CHECKING:  # types only: the records' shapes are not on the way to the first screen
    from openvaala_server.client.view import Item
    from openvaala_server.domain.diffs import FileDiff
    from openvaala_tui.widgets.markdown_render import RenderedMarkdown, StreamedMarkdown

OUTPUT_LINES = 200  # lines of tool output kept on screen (the full output stays on the item)
LIVE_LINES = 10  # ... of which this many, the last ones, while the tool still runs
ENDED = ("interrupted", "failed")
FRAME_S = 0.03  # streamed deltas are drawn at most this often per item


def mark_status(widget: Widget, status: str) -> None:
    for name in ENDED:
        widget.set_class(status == name, f"-{name}")
    if status in ENDED:
        widget.border_subtitle = status


class ItemWidget(Widget):
    """Base: `item` is the latest known state of the item shown.

    Streamed deltas are coalesced: `append` records them and `_schedule` draws them with
    `_draw_stream` at most once per `FRAME_S`, so a fast stream costs a few layouts a second,
    not one per delta."""

    DEFAULT_CSS = "ItemWidget { height: auto; }"
    KIND = ""  # CSS class next to "item"; classes are set before mounting (no restyling)

    def __init__(self, item: Item) -> None:
        super().__init__(classes=f"item {self.KIND}".strip())
        self.item = item
        self.item_id = str(item.get("itemId"))
        self._drawn_at = 0.0
        self._timer: Timer | None = None

    async def append(self, field: str, delta: str) -> None:
        """A streamed delta (the item itself was already updated by the state)."""

    async def complete(self, item: Item) -> None:
        self._cancel_draw()
        self.item = item
        mark_status(self, str(item.get("status") or ""))

    def _schedule(self) -> None:
        """Draw what was streamed now, or after the rest of the frame if one was just drawn."""
        if self._timer is not None or not self.is_mounted:
            return
        wait = self._drawn_at + FRAME_S - time.monotonic()
        if wait <= 0:
            self._flush()
        else:
            self._timer = self.set_timer(wait, self._flush)

    def _flush(self) -> None:
        self._timer = None
        self._drawn_at = time.monotonic()
        self._draw_stream()

    def _cancel_draw(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _draw_stream(self) -> None:
        """Show the item's current state (subclasses that stream)."""


class UserMessage(ItemWidget):
    """The user's message; in a subagent's transcript, what its parent agent sent it; in a
    parent's, a subagent's report."""

    KIND = "user"

    def __init__(self, item: Item) -> None:
        super().__init__(item)
        if self.item.get("origin", "user") == "subagent":
            self.border_title = "subagent"
            self.add_class("-report")
        elif self.item.get("fromSessionId"):
            self.border_title = "parent agent"
        else:
            self.border_title = "you"
        if self.item.get("status") == "pending":  # sent while the daemon is away
            self.add_class("-pending")
            self.border_subtitle = "pending: not delivered yet, waits for the daemon"

    def render(self) -> Text:  # one widget per message: no child to mount
        origin = self.item.get("origin", "user")
        prefix = ""
        if self.item.get("status") == "pending":
            prefix = "⧗ pending: not delivered yet, waits for the daemon\n"
        elif origin == "subagent":
            prefix = "↳ report from a subagent\n"
        elif self.item.get("fromSessionId"):
            prefix = "↳ from the parent agent\n"
        text = str(self.item.get("text") or "")
        pictures = "\n".join(transcript_lines(self.item))
        if pictures:
            text = f"{text}\n{pictures}" if text else pictures
        return Text(prefix + text)


class AgentMessage(ItemWidget):
    """Agent text as Markdown, drawn by the widget itself (Rich's Markdown, rendered once per
    width and text): a long history costs one widget per message. While the text streams in,
    it is re-rendered at most once per `FRAME_S`, block by block (`StreamedMarkdown`: only the
    unfinished last part again), and the layout is only redone when its height changes."""

    KIND = "agent"

    def __init__(self, item: Item) -> None:
        # Imported with the first agent message, not with the app: Markdown parsing (markdown-it,
        # Rich's Markdown, Pygments) is a tenth of the app's import time, and a new conversation's
        # first screen has no Markdown to draw (bench/tui_startup.py).
        from openvaala_tui.widgets.markdown_render import RenderedMarkdown, StreamedMarkdown

        super().__init__(item)
        self._shown = str(item.get("text") or "")
        self._body: RenderedMarkdown | StreamedMarkdown = (
            StreamedMarkdown(self._shown)
            if item.get("status") == "in_progress"
            else RenderedMarkdown(self._shown)
        )
        mark_status(self, str(item.get("status") or ""))

    @property
    def source(self) -> str:
        """The Markdown shown."""
        return self._shown

    def render(self) -> RenderedMarkdown | StreamedMarkdown:
        return self._body

    async def append(self, field: str, delta: str) -> None:
        if field != "text" or not delta:
            return
        self._shown += delta
        self._schedule()

    async def complete(self, item: Item) -> None:
        await super().complete(item)
        final = str(item.get("text") or "")
        if final != self._shown or final != self._body.text:
            self._shown = final
            self._draw_stream()

    def _draw_stream(self) -> None:
        from openvaala_tui.widgets.markdown_render import StreamedMarkdown  # see __init__

        if self._body.text == self._shown:
            return
        if isinstance(self._body, StreamedMarkdown):
            self._body.set_text(self._shown)
        else:
            self._body = StreamedMarkdown(self._shown)
        width = self.content_region.width
        if width <= 0 or not self.is_mounted:
            self.refresh(layout=True)
            return
        # Render now (the paint reuses it): the layout is redone only if the height changed.
        app = self.app
        options = app.console_options.update_width(width).update(highlight=False)
        height = len(self._body.lines(app.console, options))
        self.refresh(layout=height != self.content_region.height)


class Reasoning(ItemWidget):
    """The model's reasoning: open while it streams, folded once it is done (Enter or a
    click opens it again)."""

    def compose(self) -> ComposeResult:
        streaming = self.item.get("status") == "in_progress"
        with Collapsible(title=self._title(), collapsed=not streaming):
            yield Static(Text(str(self.item.get("text") or "")), classes="reasoning-text")

    KIND = "reasoning"

    def __init__(self, item: Item) -> None:
        super().__init__(item)
        mark_status(self, str(item.get("status") or ""))

    def _title(self) -> str:
        if self.item.get("status") == "in_progress":
            return "Thinking…"
        return "Thought: " + fmt.first_line(str(self.item.get("text") or ""), 60)

    async def append(self, field: str, delta: str) -> None:
        self._schedule()

    def _draw_stream(self) -> None:
        with contextlib.suppress(NoMatches):  # not composed yet, or being taken down
            self.query_one(".reasoning-text", Static).update(Text(str(self.item.get("text") or "")))

    async def complete(self, item: Item) -> None:
        await super().complete(item)
        try:
            text = self.query_one(".reasoning-text", Static)
            collapsible = self.query_one(Collapsible)
        except NoMatches:
            return  # not composed yet (compose draws it done), or being taken down
        text.update(Text(str(item.get("text") or "")))
        collapsible.title = self._title()
        collapsible.collapsed = True


class ToolBlock(ItemWidget):
    """A tool call and, once it runs, its result: status, command, collapsible live output."""

    KIND = "tool"

    def __init__(self, item: Item) -> None:
        super().__init__(item)
        self.call: Item | None = item if item.get("type") == "tool_call" else None
        self.result: Item | None = item if item.get("type") == "tool_result" else None
        self.call_id = str(item.get("callId") or "")
        self._restyle()
        self._was_running = self.status == "running"

    @property
    def status(self) -> str:
        return fmt.tool_status(self.call, self.result)

    def compose(self) -> ComposeResult:
        yield Static(self._header(), classes="tool-header")
        open_ = self.status == "running" or bool(self._changes())
        with Collapsible(title=self._output_title(), collapsed=not open_):
            yield Static(self._body(), classes="tool-output")

    def attach_result(self, result: Item) -> None:
        self.result = result
        self._refresh()

    def detach_result(self) -> None:
        self.result = None
        self._refresh()

    async def append(self, field: str, delta: str) -> None:
        self._schedule()

    def _draw_stream(self) -> None:
        self._refresh()

    async def complete(self, item: Item) -> None:
        self._cancel_draw()
        if item.get("type") == "tool_result":
            self.result = item
        else:
            self.call = item
        self._refresh()

    def _refresh(self) -> None:
        self._restyle()
        if not self.is_mounted:
            return  # compose draws the rest
        try:
            header = self.query_one(".tool-header", Static)
            output = self.query_one(".tool-output", Static)
            collapsible = self.query_one(Collapsible)
        except NoMatches:
            # Being taken down (a conversation switch, a rewind, the app quitting): its parts
            # go before it does, and a note for it can still arrive in between.
            return
        header.update(self._header())
        output.update(self._body())
        collapsible.title = self._output_title()
        running = self.status == "running"
        if running != self._was_running:  # open while it runs, folded once done
            self._was_running = running
            collapsible.collapsed = not running and not self._changes()  # a diff stays open

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

    def _changes(self) -> list[FileDiff]:
        """The files the call changed (`changes` of an apply_patch / edit_file result)."""
        return (self.result or {}).get("changes") or []

    def _body(self) -> Text:
        changes = self._changes()
        return changes_text(changes) if changes else Text(self._output())

    def _output(self) -> str:
        output = str((self.result or {}).get("output") or "")
        lines = output.splitlines()
        keep = LIVE_LINES if self.status == "running" else OUTPUT_LINES  # its tail, while live
        if len(lines) > keep:
            lines = [f"… {len(lines) - keep} earlier lines", *lines[-keep:]]
        return "\n".join(lines)

    def _output_title(self) -> str:
        output = str((self.result or {}).get("output") or "")
        if self.result is None:
            return "output"
        if self._changes():
            return changes_title(self._changes())
        count = len(output.splitlines())
        last = fmt.first_line(output.splitlines()[-1], 60) if count else "(none)"
        truncated = " (truncated)" if self.result.get("truncated") else ""
        lines = "line" if count == 1 else "lines"
        return f"output · {count} {lines}{truncated} · {last}"


class Notice(ItemWidget):
    KIND = "notice"

    def __init__(self, item: Item) -> None:
        super().__init__(item)
        self.set_class(item.get("kind") in ("error", "turn_failed"), "-error")

    def render(self) -> Text:
        return Text("ⓘ " + notice_text(self.item))


class Summary(ItemWidget):
    """A compaction marker: the history above was summarized; the summary opens on demand."""

    KIND = "summary"

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown  # with the first summary: see AgentMessage

        with Collapsible(title=fmt.summary_title(self.item), collapsed=True):
            yield Markdown(str(self.item.get("text") or ""))


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
