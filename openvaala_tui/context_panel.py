"""Context in the TUI: `/context` (the trace of the next request, `/context json` copies its body),
`/pin` and `/unpin`, and what an expanded summary replaced, with a jump to it
(docs/protocol.md "Context")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.widgets import Button, Collapsible, Static

from openvaala_server.client import ConnectionLost, RpcError
from openvaala_server.protocol import codec, methods
from openvaala_tui import format as fmt
from openvaala_tui.actions import CommandsMixin
from openvaala_tui.context_format import replaced_text, trace_text
from openvaala_tui.screens import ListPicker
from openvaala_tui.widgets.items import ItemWidget, Summary

if TYPE_CHECKING:
    from openvaala_server.protocol.payloads import ContextParams, PinParams

PIN_CHOICES = 30  # the latest messages offered by /pin
JUMP_PAGES = 50  # older pages loaded at most to reach a replaced item


class ContextCommands(CommandsMixin):
    """The context commands, mixed into the app before the other commands."""

    async def cmd_context(self, arg: str) -> None:
        params: ContextParams = {"conversationId": self.cid}
        if session_id := self._session_param().get("sessionId"):
            params["sessionId"] = session_id
        if arg.strip().lower() == "json":
            params["includeBody"] = True
            result = await self.call(methods.CONVERSATION_CONTEXT, params)
            body = result.get("body")
            if body is None:
                await self.local_notice("This model's provider has no request body to copy.")
                return
            text = codec.text(body, indent=2)
            self.copy_to_clipboard(text)
            self.notify(f"Copied the request body ({len(text):,} characters) to the clipboard.")
            return
        result = await self.call(methods.CONVERSATION_CONTEXT, params)
        await self.local_notice(fmt.context_report(result["usage"]) + "\n" + trace_text(result))

    async def cmd_pin(self, arg: str) -> None:
        session = self.view.sessions.get(self.following or self.view.root_id)
        if session is None:
            return
        pinned = set(session.pinned)
        messages = [
            i
            for i in session.items
            if i.get("type") in ("user_message", "agent_message")
            and i.get("status") == "completed"
            and i["itemId"] not in pinned
        ][-PIN_CHOICES:]
        choices = [(str(i["itemId"]), _label(i)) for i in messages]
        chosen = await self.push_screen_wait(
            ListPicker("Pin a message (kept verbatim by compaction)", choices, empty="No message")
        )
        if chosen:
            await self._set_pin(chosen, True)

    async def cmd_unpin(self, arg: str) -> None:
        session = self.view.sessions.get(self.following or self.view.root_id)
        if session is None:
            return
        by_id = {str(i["itemId"]): i for i in session.items}
        choices = [(p, _label(by_id[p]) if p in by_id else p) for p in session.pinned]
        chosen = await self.push_screen_wait(
            ListPicker("Unpin a message", choices, empty="Nothing is pinned")
        )
        if chosen:
            await self._set_pin(chosen, False)

    async def _set_pin(self, item_id: str, on: bool) -> None:
        params: PinParams = {"conversationId": self.cid, "itemId": item_id}
        if session_id := self._session_param().get("sessionId"):
            params["sessionId"] = session_id
        try:
            if on:
                await self.call(methods.CONVERSATION_PIN, params)
            else:
                await self.call(methods.CONVERSATION_UNPIN, params)
        except RpcError as exc:
            await self.show_error(exc)
            return
        self.notify("Pinned: compaction keeps it verbatim." if on else "Unpinned.")

    # -- summaries ---------------------------------------------------------------------------

    @on(Collapsible.Expanded)
    async def _summary_expanded(self, event: Collapsible.Expanded) -> None:
        summary = next((n for n in event.collapsible.ancestors if isinstance(n, Summary)), None)
        if summary is not None:
            await self.show_replaced(summary)

    @on(Button.Pressed, ".replaced-jump")
    async def _jump_pressed(self, event: Button.Pressed) -> None:
        if event.button.name:
            await self.jump_to(event.button.name)

    async def show_replaced(self, summary: ItemWidget) -> None:
        """Under an expanded summary: the items it replaced, and a button that jumps to them."""
        if summary.query(".replaced"):
            return
        try:
            result = await self.call(
                methods.CONVERSATION_REPLACED,
                {
                    "conversationId": self.cid,
                    "summaryItemId": summary.item_id,
                    **self._session_param(),
                },
            )
        except (RpcError, ConnectionLost) as exc:
            await self.show_error(exc)
            return
        target = summary.query_one("Collapsible Contents")
        await target.mount(Static(Text(replaced_text(result)), classes="replaced hint"))
        first = result.get("fromItemId")
        if first:
            await target.mount(Button("Jump to them", name=str(first), classes="replaced-jump"))

    async def jump_to(self, item_id: str) -> bool:
        """Scroll the transcript to `item_id`, loading older pages until it is there."""
        from openvaala_tui.widgets.transcript import Transcript

        for _ in range(JUMP_PAGES):
            found = next((w for w in self.transcript.item_widgets if w.item_id == item_id), None)
            if found is not None:
                self.transcript.scroll_to_widget(found, top=True, animate=False)
                found.add_class("-jumped")
                return True
            if not self.transcript.more_above:
                break
            # The app's handler of the transcript's own request: the next older page.
            load = getattr(self, "on_transcript_need_older")  # noqa: B009 - not a handler here
            await load(Transcript.NeedOlder(self.transcript.first_item_id))
        self.notify("That part of the history could not be found.", severity="warning")
        return False


def _label(item: Mapping[str, object]) -> str:
    who = "you" if item.get("type") == "user_message" else "agent"
    return f"{who}: {fmt.first_line(str(item.get('text') or ''), 70)}"
