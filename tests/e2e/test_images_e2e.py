"""Images in user messages, end to end: the real daemon, providers faked only at the wire.

Covered: the exact request body each provider format gets for a message with an image (Chat
Completions `image_url` data URL, Responses `input_image`, Anthropic base64 image block); the
image stored in the conversation's `attachments/` and referred to from the item; a model without
`vision = true` refused at send time with nothing sent and nothing stored; images that are not
images, too big or too many refused with a clear error.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.client import Client, RpcError
from openvaala_server.client.images import ImageError
from tests.fakes.providers import API_KEY_ENV, FakeProvider
from tests.fakes.script import Reply
from tests.fakes.wire import ANTHROPIC, CHAT, RESPONSES
from tests.support.daemon import Daemon, make_daemon
from tests.support.events import collect_until, new_conversation, turn_ended

# A 1×1 PNG (68 bytes) and a tiny GIF.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR42mNgYAAAAAMAAWgmWQ0AAAAASUVORK5CYII="
)
PNG_B64 = base64.b64encode(PNG).decode()
PNG_SHA = hashlib.sha256(PNG).hexdigest()
GIF = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"


def config(fake: FakeProvider) -> str:
    return "\n".join(
        [
            fake.config_toml("chat", CHAT, vision=True),
            fake.config_toml("responses", RESPONSES, vision=True),
            fake.config_toml("anthropic", ANTHROPIC, vision=True),
            fake.config_toml("blind", CHAT),
            "[agents.default]",
            'description = "Image tests"',
            'model = "chat"',
            'instructions = "You are a test agent."',
            "",
        ]
    )


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeProvider, Daemon]]:
    fake = FakeProvider(wire=CHAT).start()
    d = make_daemon(tmp_path_factory.mktemp("images"), config(fake))
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(API_KEY_ENV, fake.api_key or "")
            d.start()
        yield fake, d
    finally:
        d.stop()
        fake.stop()


@pytest.fixture
async def client(shared: tuple[FakeProvider, Daemon]) -> AsyncIterator[Client]:
    fake, d = shared
    fake.reset()
    c = await d.client()
    yield c
    await c.close()


async def send_image(client: Client, cid: str, text: str, images: list[dict[str, Any]]) -> Any:
    result: Any = await client.request(
        "input/send", {"conversationId": cid, "text": text, "images": images}
    )
    return result


EXPECTED = {
    CHAT: {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
        ],
    },
    RESPONSES: {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "what is this?"},
            {
                "type": "input_image",
                "image_url": f"data:image/png;base64,{PNG_B64}",
                "detail": "auto",
            },
        ],
    },
    ANTHROPIC: {
        "role": "user",
        "content": [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64},
            },
            {"type": "text", "text": "what is this?"},
        ],
    },
}


@pytest.mark.parametrize(
    ("model", "wire"), [("chat", CHAT), ("responses", RESPONSES), ("anthropic", ANTHROPIC)]
)
async def test_each_provider_gets_the_image_in_its_own_format(
    shared: tuple[FakeProvider, Daemon], client: Client, model: str, wire: str
) -> None:
    fake, d = shared
    fake.enqueue(Reply().text("a pixel"))
    cid = await new_conversation(client, str(d.workdir), model=model)
    await send_image(client, cid, "what is this?", [{"data": PNG_B64, "name": "dot.png"}])
    notes = await collect_until(client, turn_ended())
    assert notes[-1]["params"]["status"] == "completed"
    body = fake.requests[-1].json
    messages = body["messages"] if wire != RESPONSES else body["input"]
    assert messages[-1] == EXPECTED[wire]
    # The item refers to the image; its bytes are in the conversation's attachments.
    page = await client.request("conversation/read", {"conversationId": cid})
    [user] = [i for i in page["items"] if i["type"] == "user_message"]
    assert user["images"] == [
        {"sha256": PNG_SHA, "mediaType": "image/png", "size": len(PNG), "name": "dot.png"}
    ]
    stored = d.home / "conversations" / cid / "attachments" / f"{PNG_SHA}.png"
    assert stored.read_bytes() == PNG


async def test_a_model_without_vision_is_refused_before_any_call(
    shared: tuple[FakeProvider, Daemon], client: Client
) -> None:
    fake, d = shared
    cid = await new_conversation(client, str(d.workdir), model="blind")
    with pytest.raises(RpcError) as refused:
        await send_image(client, cid, "look", [{"data": PNG_B64}])
    error = refused.value
    assert error.kind == "invalid_params" and error.data["param"] == "images"
    assert "'blind' does not accept images" in error.message
    assert "vision = true" in error.message
    assert fake.requests == []
    assert not (d.home / "conversations" / cid).exists()  # nothing saved either
    # The same conversation still takes text.
    fake.enqueue(Reply().text("fine"))
    await client.request("input/send", {"conversationId": cid, "text": "just text"})
    assert (await collect_until(client, turn_ended()))[-1]["params"]["status"] == "completed"


@pytest.mark.parametrize(
    ("images", "says"),
    [
        ([{"data": base64.b64encode(b"not an image at all").decode()}], "is not a PNG, JPEG"),
        ([{"data": "%%%"}], "is not valid base64"),
        ([{"data": PNG_B64, "mediaType": "image/jpeg"}], "declared image/jpeg but its content"),
        ([{"data": PNG_B64, "mediaType": "image/tiff"}], "is not one of image/png"),
        (
            [{"data": base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(6 * 1024 * 1024)).decode()}],
            "larger than 5242880 bytes",
        ),
        ([{"data": PNG_B64}] * 5, "at most 4"),
        ([{"data": PNG_B64, "path": "/etc"}], "unknown key 'path'"),
        ("nope", "must be a list"),
    ],
)
async def test_bad_images_get_a_clear_error(
    shared: tuple[FakeProvider, Daemon], client: Client, images: Any, says: str
) -> None:
    fake, d = shared
    cid = await new_conversation(client, str(d.workdir))
    with pytest.raises(RpcError) as refused:
        await send_image(client, cid, "look", images)
    error = refused.value
    assert error.data["param"] == "images"
    assert says in error.message
    assert fake.requests == []


async def test_an_image_alone_is_a_message_and_a_gif_is_a_gif(
    shared: tuple[FakeProvider, Daemon], client: Client
) -> None:
    fake, d = shared
    fake.enqueue(Reply().text("a gif"))
    cid = await new_conversation(client, str(d.workdir), model="anthropic")
    await send_image(client, cid, "", [{"data": base64.b64encode(GIF).decode()}])
    await collect_until(client, turn_ended())
    [block] = fake.requests[-1].json["messages"][-1]["content"]
    assert block["source"]["media_type"] == "image/gif"
    sha = hashlib.sha256(GIF).hexdigest()
    assert (d.home / "conversations" / cid / "attachments" / f"{sha}.gif").is_file()


async def test_the_python_client_sends_image_files_and_bytes(
    shared: tuple[FakeProvider, Daemon], client: Client, tmp_path: Path
) -> None:
    fake, d = shared
    fake.enqueue(Reply().text("two"))
    picture = tmp_path / "dot.png"
    picture.write_bytes(PNG)
    cid = await new_conversation(client, str(d.workdir), model="responses")
    await client.send(cid, "these", images=[picture.as_uri(), GIF])
    await collect_until(client, turn_ended())
    content = fake.requests[-1].json["input"][-1]["content"]
    assert [part["type"] for part in content] == ["input_text", "input_image", "input_image"]
    assert content[2]["image_url"].startswith("data:image/gif;base64,")
    with pytest.raises(ImageError, match=r"notes\.txt is not a PNG"):
        (tmp_path / "notes.txt").write_text("words")
        await client.send(cid, "no", images=[tmp_path / "notes.txt"])
