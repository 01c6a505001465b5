"""Where images live: the conversation's `attachments/`, served over authenticated HTTP, carried
along when the conversation's directory moves to another data directory and reindexed there, and
sent again to the model after the move."""

from __future__ import annotations

import shutil
from collections.abc import Callable

import httpx
import pytest

from openvaala_server.client import Client
from tests.e2e.test_images_e2e import PNG, PNG_B64, PNG_SHA
from tests.fakes.providers import API_KEY_ENV, FakeProvider
from tests.fakes.script import Reply
from tests.fakes.wire import CHAT
from tests.support.daemon import Daemon
from tests.support.events import collect_until, new_conversation, run_turn, turn_ended


def config(fake: FakeProvider) -> str:
    return "\n".join(
        [
            fake.config_toml("eyes", CHAT, vision=True),
            "[agents.default]",
            'description = "Image storage tests"',
            'model = "eyes"',
            "",
        ]
    )


async def send_image(client: Client, cid: str, text: str) -> None:
    await client.request(
        "input/send", {"conversationId": cid, "text": text, "images": [{"data": PNG_B64}]}
    )
    notes = await collect_until(client, turn_ended())
    assert notes[-1]["params"]["status"] == "completed"


def image_url_in(body: dict[str, object]) -> bool:
    return f"data:image/png;base64,{PNG_B64}" in str(body)


async def test_images_move_with_the_conversation_and_survive_a_reindex(
    daemon_factory: Callable[..., Daemon], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeProvider(wire=CHAT) as fake:
        monkeypatch.setenv(API_KEY_ENV, fake.api_key or "")
        home = daemon_factory(config(fake))
        client = await home.client()
        cid = await new_conversation(client, str(home.workdir))
        fake.enqueue(Reply().text("a pixel"))
        await send_image(client, cid, "what is this?")
        await client.close()
        home.stop()

        other = daemon_factory(config(fake), name="other", start=False)
        other.start()  # creates its data directory
        other.stop()
        source = home.home / "conversations" / cid
        shutil.copytree(source, other.home / "conversations" / cid)
        shutil.rmtree(source)  # a move
        report = other.cli("reindex")
        assert report.returncode == 0, report.stderr
        other.start()
        client = await other.client()
        try:
            await client.subscribe(cid)
            page = await client.request("conversation/read", {"conversationId": cid})
            [user] = [i for i in page["items"] if i["type"] == "user_message"]
            assert user["images"][0]["sha256"] == PNG_SHA
            # The next model call sends the image again, read from the moved directory.
            fake.reset()
            fake.enqueue(Reply().text("still a pixel"))
            await run_turn(client, cid, "and now?")
            assert image_url_in(fake.requests[-1].json)
            # Search (the reindexed index) finds the message; the image is no part of it.
            found = await client.request("conversation/list", {"search": "what"})
            assert [c["conversationId"] for c in found["conversations"]] == [cid]
        finally:
            await client.close()


async def test_a_lost_attachment_reads_as_its_placeholder(
    daemon_factory: Callable[..., Daemon], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A control for the move test: without the file, the image is not sent (a notice is)."""
    with FakeProvider(wire=CHAT) as fake:
        monkeypatch.setenv(API_KEY_ENV, fake.api_key or "")
        d = daemon_factory(config(fake))
        client = await d.client()
        cid = await new_conversation(client, str(d.workdir))
        fake.enqueue(Reply().text("a pixel"))
        await send_image(client, cid, "what is this?")
        await client.close()
        d.stop()
        shutil.rmtree(d.home / "conversations" / cid / "attachments")
        d.start()
        client = await d.client()
        try:
            await client.subscribe(cid)
            fake.reset()
            fake.enqueue(Reply().text("gone"))
            await run_turn(client, cid, "and now?")
            body = fake.requests[-1].json
            assert not image_url_in(body)
            assert "[image: image/png" in str(body)
        finally:
            await client.close()


async def test_the_attachment_route_serves_an_image_only_with_credentials_forks_and_rewinds_copy_it(
    daemon: Daemon,
) -> None:
    client = await daemon.client()
    try:
        cid = await new_conversation(client, str(daemon.workdir))
        await run_turn(client, cid, "look", images=[{"data": PNG_B64}])
        other = await new_conversation(client, str(daemon.workdir))
        await run_turn(client, other, "no image here")
        forked = await client.request("conversation/fork", {"conversationId": cid})
        fork = forked["conversation"]["conversationId"]
        page = await client.request("conversation/read", {"conversationId": cid})
        [message] = [i for i in page["items"] if i["type"] == "user_message"]
        rewound = await client.request(
            "conversation/rewind", {"conversationId": cid, "messageId": message["itemId"]}
        )
        rewind = rewound["conversation"]["conversationId"]
        assert rewound["composerText"] == "look"
        assert rewound["composerImages"] == message["images"]
    finally:
        await client.close()
    base = f"http://{daemon.address}"
    auth = {"Authorization": f"Bearer {daemon.token}"}
    async with httpx.AsyncClient() as http:
        ok = await http.get(f"{base}/attachments/{cid}/{PNG_SHA}", headers=auth)
        assert ok.status_code == 200 and ok.content == PNG
        assert ok.headers["content-type"] == "image/png"
        assert ok.headers["x-content-type-options"] == "nosniff"
        anonymous = await http.get(f"{base}/attachments/{cid}/{PNG_SHA}")
        assert anonymous.status_code == 401
        # A fork takes the images its items refer to along.
        copied = await http.get(f"{base}/attachments/{fork}/{PNG_SHA}", headers=auth)
        assert copied.status_code == 200 and copied.content == PNG
        # A rewind to the message brings its images back, served by the new conversation.
        back = await http.get(f"{base}/attachments/{rewind}/{PNG_SHA}", headers=auth)
        assert back.status_code == 200 and back.content == PNG
        for path in (
            f"{other}/{PNG_SHA}",  # another conversation does not hold it
            f"{cid}/{'0' * 64}",  # no such image
            f"{cid}/{PNG_SHA.upper()}",  # not a hash as we write them
            f"{cid}/..%2F..%2Ftoken",
            f"{'x' * 32}/{PNG_SHA}",
        ):
            missing = await http.get(f"{base}/attachments/{path}", headers=auth)
            assert missing.status_code == 404, path
