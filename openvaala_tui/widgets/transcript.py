"""The scrolling transcript of one session: item widgets keyed by itemId, updated in place.

Only a window of the session is mounted: the last page at first, older pages when the user
scrolls to the top (`NeedOlder`), and the oldest widgets are pruned past `WIDGET_BUDGET` while
the view follows the bottom, so a long conversation stays fast.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from openvaala_tui.widgets.items import ItemWidget, ToolBlock, make_item_widget
from openvaala_tui.widgets.welcome import Welcome

if TYPE_CHECKING:  # a type only: the records' shapes are not on the way to the first screen
    from openvaala_server.client.view import Item

FIRST_PAGE = 20
WIDGET_BUDGET = 60
REST_DELAY_S = 0.05  # the rest of the first page is mounted this long after its last screen
REST_CHUNK = 4  # ... this many items at a time
KEEP_IN_PLACE_FRAMES = 5  # frames to hold the view in place after mounting above it


class Transcript(VerticalScroll):
    class NeedOlder(Message):
        """Scrolled to the top: mount earlier items (`before_item_id` is the first shown)."""

        def __init__(self, before_item_id: str | None) -> None:
            super().__init__()
            self.before_item_id = before_item_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.by_id: dict[str, ItemWidget] = {}
        self.calls: dict[str, ToolBlock] = {}
        self.more_above = False  # items exist above the first mounted one
        self._asked_older = False
        self._shows = 0  # counts `show` calls: a page's rest is not mounted into a newer one

    def compose(self) -> ComposeResult:
        yield Static("↑ scroll up for earlier messages", id="older-hint", classes="hint")
        yield Welcome(id="welcome")

    def set_welcome(self, text: Text | str) -> None:
        """What the first screen says; shown while no item is."""
        welcome = self.query_one(Welcome)
        welcome.update(text)
        self._show_welcome()

    def _show_welcome(self) -> None:
        welcome = self.query_one(Welcome)
        empty = not self.by_id and not self.more_above
        welcome.display = empty and bool(str(welcome.content))

    def on_mount(self) -> None:
        self.anchor()

    # -- what is mounted ---------------------------------------------------------------------

    @property
    def item_widgets(self) -> list[ItemWidget]:
        return [w for w in self.children if isinstance(w, ItemWidget)]

    @property
    def first_item_id(self) -> str | None:
        widgets = self.item_widgets
        if not widgets:
            return None
        first = widgets[0]
        if isinstance(first, ToolBlock) and first.call is None and first.result is not None:
            return str(first.result.get("itemId"))
        return first.item_id

    def _set_more_above(self, value: bool) -> None:
        self.more_above = value
        self.query_one("#older-hint").display = value

    # -- changes -----------------------------------------------------------------------------

    async def show(self, items: list[Item], more_above: bool) -> None:
        """Replace everything with the last page of `items`. The items that fill the screen
        are mounted first; the rest of the page goes above them once that screen is drawn."""
        self._shows += 1
        await self.remove_children(ItemWidget)
        self.by_id.clear()
        self.calls.clear()
        page = items[-FIRST_PAGE:]
        widgets = self._build(page)
        split = self._screenful(widgets)
        if widgets:
            await self.mount_all(widgets[split:])
        more_above = more_above or len(items) > len(page)
        self._set_more_above(more_above or split > 0)
        self._asked_older = split > 0  # no earlier page until this one is all mounted
        self._show_welcome()
        self.anchor()
        self.scroll_end(animate=False, immediate=True)
        if split > 0:
            rest = partial(self._mount_rest, self._shows, widgets[:split], more_above)
            # After the screen with the last items is drawn, and a little later still: the
            # rest costs a layout of its own, which would otherwise delay that first screen.
            self.call_after_refresh(self.set_timer, REST_DELAY_S, rest)

    async def _mount_rest(self, show: int, widgets: list[ItemWidget], more_above: bool) -> None:
        """Mount the rest of a page a few items at a time (the nearest first), one layout
        each, so that no single step holds up the keyboard for long."""
        if show != self._shows:
            return  # shown anew meanwhile
        widgets = [w for w in widgets if w in self.by_id.values()]
        now, later = widgets[-REST_CHUNK:], widgets[:-REST_CHUNK]
        await self._mount_above(now, more_above or bool(later))
        if later:
            self._asked_older = True
            rest = partial(self._mount_rest, show, later, more_above)
            self.call_after_refresh(self.set_timer, REST_DELAY_S, rest)

    def _screenful(self, widgets: list[ItemWidget]) -> int:
        """Index in `widgets` from which the last ones fill about two screens (estimated from
        their text: rendering Markdown to measure it is what this avoids)."""
        width = max(20, (self.size.width or 80) - 4)
        need = 2 * (self.size.height or 40)
        rows = 0
        for index in range(len(widgets) - 1, -1, -1):
            text = str(widgets[index].item.get("text") or "")
            rows += 2 + sum(1 + len(line) // width for line in text.splitlines())
            if rows >= need:
                return index
        return 0

    async def prepend(self, items: list[Item], more_above: bool) -> None:
        """Earlier items, in order, mounted above the first one shown. What the user was
        looking at stays where it was on screen: the view does not jump to the new items."""
        await self._mount_above(self._build(items), more_above)

    async def _mount_above(self, widgets: list[ItemWidget], more_above: bool) -> None:
        shown = self.item_widgets
        anchor = shown[0] if shown else None
        offset = anchor.virtual_region.y - self.scroll_y if anchor is not None else 0.0
        if widgets:
            await self.mount_all(widgets, after=self.query_one("#older-hint"))
        self._set_more_above(more_above)
        if widgets and anchor is not None and not self.following_bottom:
            await self._keep_in_place(anchor, offset)
        self._asked_older = False

    async def _keep_in_place(self, anchor: Widget, offset: float) -> None:
        """Scroll so that `anchor` is `offset` rows below the top again. Under load the new
        widgets may take more than one layout to get their heights (and the scrollable height
        with them, which would clamp the scroll), so check again for a few frames, unless the
        user scrolls meanwhile."""
        placed: float | None = None
        for _ in range(KEEP_IN_PLACE_FRAMES):
            await self._laid_out()
            if placed is not None and self.scroll_y != placed:
                return  # the user scrolled meanwhile: leave it to them
            target = anchor.virtual_region.y - offset
            if self.scroll_y == target:
                return
            self.scroll_to(y=target, animate=False, immediate=True, force=True)
            placed = self.scroll_y

    @property
    def following_bottom(self) -> bool:
        """Anchored to the bottom and not scrolled away from it by the user."""
        return self.is_anchored and not getattr(self, "_anchor_released", False)

    async def _laid_out(self) -> None:
        """Wait until the screen has laid out what was just mounted (regions are known)."""
        done = asyncio.Event()
        self.call_after_refresh(done.set)
        await done.wait()

    async def add(self, item: Item) -> None:
        if str(item.get("itemId")) in self.by_id:
            await self.update(item)
            return
        widgets = self._build([item])
        if widgets:
            await self.mount_all(widgets)
        self._show_welcome()
        await self._prune()

    async def delta(self, item_id: str, field: str, delta: str) -> None:
        widget = self.by_id.get(item_id)
        if widget is not None:
            await widget.append(field, delta)

    async def update(self, item: Item) -> None:
        widget = self.by_id.get(str(item.get("itemId")))
        if widget is None:
            await self.add(item)
        else:
            await widget.complete(item)

    async def remove_item(self, item_id: str) -> None:
        widget = self.by_id.pop(item_id, None)
        if widget is None:
            return
        if (
            isinstance(widget, ToolBlock)
            and widget.call is not None
            and widget.result is not None
            and widget.result.get("itemId") == item_id
        ):
            widget.detach_result()
            return
        for key, block in list(self.calls.items()):
            if block is widget:
                del self.calls[key]
        for key, other in list(self.by_id.items()):
            if other is widget:
                del self.by_id[key]
        if widget.is_mounted:  # else it is in the rest of a page, not mounted yet
            await widget.remove()

    # -- internals ---------------------------------------------------------------------------

    def _build(self, items: list[Item]) -> list[ItemWidget]:
        """Widgets for `items`, a tool result joining its call's block when that is shown."""
        built: list[ItemWidget] = []
        for item in items:
            item_id = str(item.get("itemId"))
            if item.get("type") == "tool_result":
                block = self.calls.get(str(item.get("callId") or ""))
                if block is not None:
                    block.attach_result(item)
                    self.by_id[item_id] = block
                    continue
            widget = make_item_widget(item)
            if isinstance(widget, ToolBlock) and widget.call_id:
                self.calls[widget.call_id] = widget
            self.by_id[item_id] = widget
            built.append(widget)
        return built

    async def _prune(self) -> None:
        widgets = self.item_widgets
        extra = len(widgets) - WIDGET_BUDGET
        if extra <= 0 or not self.following_bottom:
            return  # the user is reading further up: keep what is there
        doomed = widgets[:extra]
        gone = set(map(id, doomed))
        for key, widget in list(self.by_id.items()):
            if id(widget) in gone:
                del self.by_id[key]
        for key, block in list(self.calls.items()):
            if id(block) in gone:
                del self.calls[key]
        await self.remove_children(doomed)
        self._set_more_above(True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 and old_value > 0 and self.more_above and not self._asked_older:
            self._asked_older = True
            self.post_message(self.NeedOlder(self.first_item_id))
