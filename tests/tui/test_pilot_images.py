"""Images in the terminal UI against a real daemon: `/image PATH` and a pasted image path attach
an image to the next message (a notice says so), the message goes out with it, and the
transcript shows a placeholder line for it."""

from __future__ import annotations

from typing import Any

import pytest

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.inbox import InboxList, InboxPanel
from openvaala_tui.widgets.items import AgentMessage, UserMessage
from tests.e2e.test_images_e2e import GIF, PNG, PNG_SHA
from tests.tui.conftest import Clients, demo_config, notices, ready, type_and_send, wait_for
from tests.tui.test_pilot_inbox import start_sleep


async def test_image_command_attaches_to_the_next_message(
    daemon_factory: Any, clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon = daemon_factory(demo_config())
    (daemon.workdir / "dot.png").write_bytes(PNG)
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/image dot.png")
        attached = f"Image attached: [image: dot.png, image/png, {len(PNG)} bytes]"
        await wait_for(pilot, lambda: any(attached in n for n in notices(app)), what="notice")
        await type_and_send(pilot, "what is this?")
        await wait_for(pilot, lambda: bool(app.transcript.query(AgentMessage)), what="reply")
        [message] = app.transcript.query(UserMessage)
        assert message.item["images"][0]["sha256"] == PNG_SHA
        shown = str(message.render())
        assert shown == f"what is this?\n🖼 [image: dot.png, image/png, {len(PNG)} bytes]"
        await wait_for(
            pilot,
            lambda: "I received 1 image(s)" in str(app.transcript.query(AgentMessage)[0].item),
            what="the demo's answer about the image",
        )
        assert not app.pending_images.waiting  # sent: nothing waits any more
        # A path that is no image is refused with a reason, and nothing waits.
        (daemon.workdir / "notes.txt").write_text("words")
        warned: list[str] = []
        shown_toast = app.notify

        def notify(message: str, **options: Any) -> None:
            warned.append(str(message))
            shown_toast(message, **options)

        monkeypatch.setattr(app, "notify", notify)
        await type_and_send(pilot, "/image notes.txt")
        await wait_for(pilot, lambda: any("notes.txt" in w for w in warned), what="the refusal")
        assert not app.pending_images.waiting


async def test_a_pasted_image_path_attaches_it(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    shot = daemon.workdir / "my shot.gif"
    shot.write_bytes(GIF)
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        # What a terminal pastes for a dropped file: its path, spaces escaped. Alone, it waits.
        await type_and_send(pilot, str(shot).replace(" ", "\\ "))
        await wait_for(
            pilot,
            lambda: any("Image attached: [image: my shot.gif" in n for n in notices(app)),
            what="notice",
        )
        assert not app.transcript.query(UserMessage)  # nothing was sent yet
        # In a message, the path stays in the text and the image goes with it.
        png = daemon.workdir / "dot.png"
        png.write_bytes(PNG)
        await type_and_send(pilot, "compare ./dot.png with the one before")
        await wait_for(pilot, lambda: bool(app.transcript.query(AgentMessage)), what="reply")
        [message] = app.transcript.query(UserMessage)
        assert message.item["text"] == "compare ./dot.png with the one before"
        kinds = [ref["mediaType"] for ref in message.item["images"]]
        assert kinds == ["image/gif", "image/png"]
        assert "🖼 [image: my shot.gif, image/gif" in str(message.render())


async def test_a_waiting_message_shows_its_images_and_withdraw_keeps_them(
    daemon_factory: Any, clients: Clients
) -> None:
    daemon = daemon_factory(demo_config())
    (daemon.workdir / "dot.png").write_bytes(PNG)
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await start_sleep(pilot, app, 10)  # Esc ends it
        await type_and_send(pilot, "/image dot.png")
        await type_and_send(pilot, "queued with a picture", key="tab")
        panel = app.query_one(InboxPanel)
        await wait_for(pilot, lambda: len(panel.inputs) == 1, what="the waiting input")
        assert not app.pending_images.waiting  # they went with the message
        label = str(app.query_one(InboxList).get_option_at_index(0).prompt)
        assert label.endswith("queued with a picture  🖼 1")
        await pilot.press("ctrl+w")
        await pilot.press("w")
        await wait_for(pilot, lambda: not panel.inputs, what="the withdrawal")
        await wait_for(pilot, lambda: bool(app.pending_images.waiting), what="the image back")
        assert app.composer.text == "queued with a picture"
        [image] = app.pending_images.waiting
        assert image.sha256 == PNG_SHA and image.name == "dot.png"
        await pilot.press("escape")
