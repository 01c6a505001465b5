"""Waiting inputs from the terminal: two queued while a turn runs, one edited from the Waiting
panel (`e`), the other withdrawn back to the composer (`w`), and Esc, which interrupts the turn
while the queue goes on. On a fake client keeping the inbox as the daemon announces it
(`inbox/updated`: tests/tui/fake_client.py); the daemon's inbox rules (steering into the running
turn, what an interrupt leaves queued): tests/e2e/test_inbox_e2e.py and test_pilot_inbox.py."""

from __future__ import annotations

import asyncio

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
from openvaala_tui.widgets.inbox import InboxList, InboxPanel
from openvaala_tui.widgets.items import UserMessage
from tests.tui.conftest import ready, type_and_send, wait_for
from tests.tui.fake_client import CWD, FakeClient


def queueing() -> FakeClient:
    """A fake whose first message starts a turn that runs until interrupted, and which queues
    what is sent meanwhile; an interrupt ends the turn and the first waiting input runs."""
    fake = FakeClient()
    running: list[str] = []
    inbox: list[InputWire] = []

    def announce(cid: str) -> None:
        fake.emit("inbox/updated", {"sessionId": fake.root(cid), "inputs": list(inbox)}, cid)

    def send(params: JsonObject) -> SendResult:
        cid, text = str(params["conversationId"]), str(params["text"])
        input_id = new_id()
        if running:
            inbox.append({"inputId": input_id, "text": text, "mode": "queue", "origin": "user"})
            announce(cid)
            return {"inputId": input_id, "disposition": "queued"}
        loop = asyncio.get_running_loop()
        loop.call_soon(lambda: running.append(fake.start_turn(cid, text)))
        return {"inputId": input_id, "disposition": "started"}

    def edit(params: JsonObject) -> EmptyResult:
        waiting = next(i for i in inbox if i["inputId"] == params["inputId"])
        waiting["text"] = str(params["text"])
        announce(fake.only())
        return {}

    def withdraw(params: JsonObject) -> WithdrawResult:
        waiting = next(i for i in inbox if i["inputId"] == params["inputId"])
        inbox.remove(waiting)
        announce(fake.only())
        return {"text": waiting["text"]}

    def interrupt(params: JsonObject) -> InterruptResult:
        cid = str(params["conversationId"])
        fake.end_turn(cid, running.pop(), "interrupted")
        if inbox:
            next_one = inbox.pop(0)
            announce(cid)
            fake.turn(cid, next_one["text"], "Done.")
        return {"interrupted": True}

    fake.answers.update(
        {
            "input/send": send,
            "input/edit": edit,
            "input/withdraw": withdraw,
            "turn/interrupt": interrupt,
        }
    )
    return fake


def user_texts(app: VaalaApp) -> list[str]:
    return [str(w.item.get("text")) for w in app.transcript.query(UserMessage)]


async def test_queue_two_edit_one_withdraw_the_other() -> None:
    fake = queueing()
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
