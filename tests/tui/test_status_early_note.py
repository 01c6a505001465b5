"""A note can reach the status bar before it is mounted (a conversation opened under load): it
is drawn once the bar is there, and the app does not fail (it did: `NoMatches '#status-title'`
from `StatusBar.refresh_from`, raised in the worker handling the note)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Label

from openvaala_server.client.view import ConversationView
from openvaala_tui.widgets.status import StatusBar


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Label("host")


async def test_a_refresh_before_mount_is_drawn_once_the_bar_is_mounted() -> None:
    view = ConversationView()
    view.apply(
        {
            "method": "conversation/snapshot",
            "params": {
                "seq": 1,
                "snapshot": {
                    "conversation": {"conversationId": "c" * 32, "title": "Early title"},
                    "sessions": [],
                },
            },
        }
    )
    app = Host()
    async with app.run_test() as pilot:
        bar = StatusBar(id="status")
        bar.refresh_from(view, None)  # before mount: what an early note does
        await app.mount(bar)
        await pilot.pause()
        title = bar.query_one("#status-title", Label)
        for _ in range(50):  # drawn after the next refresh
            if str(title.render()) == "Early title":
                break
            await pilot.pause()
        assert str(title.render()) == "Early title"
