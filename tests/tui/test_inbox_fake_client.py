"""Waiting inputs from the terminal: two queued while a turn runs, one edited from the Waiting
panel (`e`), the other withdrawn back to the composer (`w`), and Esc, which interrupts the turn
while the queue goes on; the focus and the footer around them: the Waiting panel that empties
while focused hands the focus to the composer, text typed before the app has handled a
Tab-queued message is the next message (never merged), and while a waiting message is edited
the footer offers `esc Cancel edit`. On a fake client keeping the inbox as the daemon announces it
(`inbox/updated`: tests/tui/fake_client.py); the daemon's inbox rules (steering into the running
turn, what an interrupt leaves queued): tests/e2e/test_inbox_e2e.py and test_pilot_inbox.py."""

from __future__ import annotations

import asyncio

from textual import events
from textual.pilot import Pilot

from openvaala_server.domain.ids import new_id
from openvaala_server.domain.inbox import InputWire
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.protocol.payloads import (
    EmptyResult,
    InterruptResult,
    SendResult,
    WithdrawResult,
)
from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.footer import QuietFooter
from openvaala_tui.widgets.inbox import InboxList, InboxPanel
from openvaala_tui.widgets.items import UserMessage
from tests.tui.conftest import ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD


class Queueing(FakeClient):
    """A fake whose first message starts a turn that runs until it is interrupted or `finish`ed,
    and which queues what is sent meanwhile; when the turn ends the first waiting input runs."""

    def __init__(self) -> None:
        super().__init__()
        self.running: list[str] = []
        self.inbox: list[InputWire] = []
        self.answers.update(
            {
                "input/send": self._send,
                "input/edit": self._edit,
                "input/withdraw": self._withdraw,
                "turn/interrupt": self._interrupt,
            }
        )

    def _announce(self, cid: str) -> None:
        self.emit("inbox/updated", {"sessionId": self.root(cid), "inputs": list(self.inbox)}, cid)

    def _send(self, params: JsonObject) -> SendResult:
        cid, text = str(params["conversationId"]), str(params["text"])
        input_id = new_id()
        if self.running:
            queued: InputWire = {
                "inputId": input_id,
                "text": text,
                "mode": "queue",
                "origin": "user",
            }
            self.inbox.append(queued)
            self._announce(cid)
            return {"inputId": input_id, "disposition": "queued"}
        loop = asyncio.get_running_loop()
        loop.call_soon(lambda: self.running.append(self.start_turn(cid, text)))
        return {"inputId": input_id, "disposition": "started"}

    def _edit(self, params: JsonObject) -> EmptyResult:
        waiting = next(i for i in self.inbox if i["inputId"] == params["inputId"])
        waiting["text"] = str(params["text"])
        self._announce(self.only())
        return {}

    def _withdraw(self, params: JsonObject) -> WithdrawResult:
        waiting = next(i for i in self.inbox if i["inputId"] == params["inputId"])
        self.inbox.remove(waiting)
        self._announce(self.only())
        return {"text": waiting["text"]}

    def _interrupt(self, params: JsonObject) -> InterruptResult:
        self.finish(str(params["conversationId"]), "interrupted")
        return {"interrupted": True}

    def finish(self, cid: str, status: str = "completed") -> None:
        """The running turn ends; the first waiting input runs as a whole turn."""
        self.end_turn(cid, self.running.pop(), status)
        if self.inbox:
            next_one = self.inbox.pop(0)
            self._announce(cid)
            self.turn(cid, next_one["text"], "Done.")


def user_texts(app: VaalaApp) -> list[str]:
    return [str(w.item.get("text")) for w in app.transcript.query(UserMessage)]


async def test_queue_two_edit_one_withdraw_the_other() -> None:
    fake = Queueing()
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "run: sleep 10")
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: root.running, what="the turn")
        await type_and_send(pilot, "first queued", key="tab")
        await type_and_send(pilot, "second queued", key="tab")
        panel = app.query_one(InboxPanel)
        await wait_for(pilot, lambda: len(panel.inputs) == 2, what="two waiting inputs")
        assert [i["mode"] for i in panel.inputs] == ["queue", "queue"]
        assert [p["mode"] for p in fake.params_of("input/send")[1:]] == ["queue", "queue"]

        await pilot.press("ctrl+w")
        options = app.query_one(InboxList)
        assert options.has_focus
        options.highlighted = 1
        await pilot.press("e")
        assert app.composer.text == "second queued"
        assert app.composer.editing_input == panel.inputs[1]["inputId"]
        app.composer.set_text("second, edited")
        await pilot.press("enter")
        await wait_for(pilot, lambda: panel.inputs[1]["text"] == "second, edited", what="the edit")
        assert app.composer.editing_input is None and app.composer.is_empty
        assert fake.params_of("input/edit") == [
            {"inputId": panel.inputs[1]["inputId"], "text": "second, edited"}
        ]

        await pilot.press("ctrl+w")
        options.highlighted = 0
        await pilot.press("w")
        await wait_for(pilot, lambda: len(panel.inputs) == 1, what="the withdrawal")
        assert app.composer.text == "first queued"
        assert panel.inputs[0]["text"] == "second, edited"

        # Esc with text in the composer still interrupts the running turn; the queue goes on.
        await pilot.press("escape")
        await wait_for(
            pilot, lambda: "second, edited" in user_texts(app), timeout=15, what="next turn"
        )
        await wait_for(pilot, lambda: not root.running and not panel.inputs, timeout=15)
        assert "first queued" not in user_texts(app)
        assert len(fake.params_of("turn/interrupt")) == 1


def waiting(app: VaalaApp) -> list[str]:
    return [str(i.get("text")) for i in app.query_one(InboxPanel).inputs]


def footer_keys(app: VaalaApp) -> str:
    return " ".join(str(k.render()) for k in app.query_one(QuietFooter).children)


async def held(pilot: Pilot[int], app: VaalaApp) -> None:
    """A turn that runs until the test ends it."""
    await type_and_send(pilot, "run: echo held")
    root = app.view.root
    assert root is not None
    await wait_for(pilot, lambda: root.running, what="the turn")
    app.composer.focus()


async def test_the_emptied_waiting_panel_hands_the_focus_back() -> None:
    fake = Queueing()
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await held(pilot, app)
        await type_and_send(pilot, "queued one", key="tab")
        await wait_for(pilot, lambda: waiting(app) == ["queued one"], what="the queued message")
        await pilot.press("ctrl+w")
        assert app.query_one(InboxList).has_focus
        fake.finish(app.view.conversation_id)  # the turn ends: the queued message runs
        panel = app.query_one(InboxPanel)
        await wait_for(pilot, lambda: not panel.display, what="the panel to empty")
        assert app.composer.has_focus
        await pilot.press("x", "y")
        assert app.composer.text == "xy"  # typed keys reach the composer


async def test_typing_ahead_after_tab_is_the_next_message() -> None:
    app = VaalaApp(cwd=CWD, client=Queueing())
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await held(pilot, app)
        composer = app.composer
        composer.set_text("q-a queued")
        # The keys arrive before the app has handled the first message (a loaded machine):
        # the composer's own key handler runs them one after another, with no pause between.
        await composer._on_key(events.Key("tab", None))
        composer.insert("q-b queued")
        await composer._on_key(events.Key("tab", None))
        await wait_for(pilot, lambda: len(waiting(app)) == 2, what="two waiting messages")
        assert waiting(app) == ["q-a queued", "q-b queued"]
        assert composer.is_empty


async def test_editing_a_waiting_message_shows_esc_cancel_edit() -> None:
    app = VaalaApp(cwd=CWD, client=Queueing())
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await held(pilot, app)
        await type_and_send(pilot, "to edit", key="tab")
        await wait_for(pilot, lambda: waiting(app) == ["to edit"], what="the queued message")
        assert "Interrupt" in footer_keys(app)
        await pilot.press("ctrl+w")
        await pilot.press("e")
        await wait_for(pilot, lambda: "Cancel edit" in footer_keys(app), what="the footer")
        assert "Interrupt" not in footer_keys(app)
        await pilot.press("escape")
        assert app.composer.editing_input is None and app.composer.is_empty
        await wait_for(pilot, lambda: "Interrupt" in footer_keys(app), what="the footer back")
        assert waiting(app) == ["to edit"]  # Esc cancelled the edit, not the turn
        root = app.view.root
        assert root is not None and root.running
