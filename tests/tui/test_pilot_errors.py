"""Errors a user can act on: the reason next to the retry counter and a countdown that counts;
a lost daemon says how to start it; a message sent meanwhile shows as pending until delivered;
no protocol method name in what the user reads."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from textual.widgets import Label

from openvaala_server.client import Client, ConnectionLost, RpcError
from openvaala_server.domain.ids import new_id
from openvaala_server.domain.records import ErrorInfo
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.protocol.payloads import InterruptResult, SendResult
from openvaala_tui import errors
from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import UserMessage
from tests.tui.conftest import demo_config, ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD


def label_text(app: VaalaApp, selector: str) -> str:
    return str(app.query_one(selector, Label).render())


def seconds_left(text: str) -> int:
    match = re.search(r"in (\d+) s", text)
    assert match, text
    return int(match.group(1))


async def test_the_retry_shows_its_reason_and_counts_down() -> None:
    # The daemon's retry of a failed model call as it announces it (tests/e2e/ for when it does):
    # on a fake client (tests/tui/fake_client.py), the turn holds in its retry until Esc.
    fake = FakeClient()
    turns: list[str] = []

    def send(params: JsonObject) -> SendResult:
        cid = str(params["conversationId"])

        def fail_and_retry() -> None:
            turns.append(fake.start_turn(cid, str(params["text"])))
            error: ErrorInfo = {"kind": "provider_error", "message": "the upstream is overloaded"}
            retry = {"attempt": 1, "maxAttempts": 3, "delaySeconds": 30.0, "error": error}
            fake.emit("retry/scheduled", {"sessionId": fake.root(cid), **retry}, cid)

        asyncio.get_running_loop().call_soon(fail_and_retry)
        return {"inputId": new_id(), "disposition": "started"}

    def interrupt(params: JsonObject) -> InterruptResult:
        fake.end_turn(str(params["conversationId"]), turns[-1], "interrupted")
        return {"interrupted": True}

    fake.answers.update({"input/send": send, "turn/interrupt": interrupt})
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "hello")
        retry = app.query_one("#status-retry", Label)
        await wait_for(pilot, lambda: retry.display, what="the retry")
        first = label_text(app, "#status-retry")
        assert re.match(r"retrying 1/\d+ in \d+ s: ", first), first
        assert "the upstream is overloaded" in first
        await wait_for(
            pilot,
            lambda: seconds_left(label_text(app, "#status-retry")) < seconds_left(first),
            what="the countdown to count",
        )
        await pilot.press("escape")  # interrupted: the retry is over
        await wait_for(pilot, lambda: not retry.display, what="the retry to go")
        assert fake.methods().count("turn/interrupt") == 1


async def test_a_lost_daemon_says_how_to_start_it_and_a_message_waits_for_it(
    daemon_factory: Any,
) -> None:
    daemon = daemon_factory(demo_config())
    client = await Client.connect(data_dir=daemon.data_dir, start=False, client_name="tui")
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await type_and_send(pilot, "before")  # the conversation is stored from then on
            await wait_for(
                pilot,
                lambda: (
                    app.view.root is not None
                    and app.view.root.status == "idle"
                    and len(app.transcript.query(UserMessage)) == 1
                ),
                what="the first turn",
            )
            connection = app.query_one("#status-connection", Label)
            await asyncio.to_thread(daemon.stop)
            await wait_for(pilot, lambda: connection.display, what="the lost daemon")
            assert "openvaala serve start" in label_text(app, "#status-connection")

            await type_and_send(pilot, "sent while it is away")
            await wait_for(
                pilot, lambda: bool(app.transcript.query(".-pending")), what="a pending message"
            )
            pending = app.transcript.query_one(".-pending", UserMessage)
            assert "sent while it is away" in str(pending.render())
            assert "pending" in str(pending.render())
            assert app.composer.is_empty

            await asyncio.to_thread(daemon.start)
            await wait_for(
                pilot,
                lambda: (
                    not app.transcript.query(".-pending")
                    and [w.item.get("text") for w in app.transcript.query(UserMessage)]
                    == ["before", "sent while it is away"]
                ),
                timeout=20,
                what="the message delivered",
            )
            assert not connection.display
    finally:
        await client.close()


def test_no_protocol_method_name_reaches_the_user() -> None:
    for exc in (
        ConnectionLost("connection lost during conversation/list"),
        RpcError({"message": "bad params for input/send: text is empty", "data": {"kind": "x"}}),
        RpcError({"message": "unknown method 'session/foo'", "data": {"kind": "not_idle"}}),
    ):
        text = errors.describe(exc)
        assert not errors.METHOD.search(text), text
        assert "/send" not in text and "/list" not in text and "/foo" not in text
