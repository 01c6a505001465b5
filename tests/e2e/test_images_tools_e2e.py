"""Images that tools return, end to end: `read_file` on an image and an MCP tool's image content are
stored in the conversation's attachments, referred to from the tool result, and sent to a vision
model in each provider's format; a model without vision reads a notice instead."""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from openvaala_server.client import Client
from tests.e2e.test_images_e2e import PNG, PNG_B64, PNG_SHA
from tests.fakes.providers import API_KEY_ENV, FakeProvider
from tests.fakes.script import Reply
from tests.fakes.wire import ANTHROPIC, CHAT, RESPONSES
from tests.support.daemon import Daemon, make_daemon
from tests.support.events import collect_until, completed_items, new_conversation, turn_ended
from tests.support.paths import TESTS

MCP_SERVER = (TESTS / "server") / "mcp" / "mcp_test_server.py"


def config(fake: FakeProvider) -> str:
    return "\n".join(
        [
            fake.config_toml("chat", CHAT, vision=True),
            fake.config_toml("responses", RESPONSES, vision=True),
            fake.config_toml("anthropic", ANTHROPIC, vision=True),
            fake.config_toml("blind", CHAT),
            "[agents.default]",
            'description = "Tool image tests"',
            'model = "chat"',
            'tools = ["read_file", "mcp:t"]',
            "",
            "[mcp_servers.t]",
            f"command = {json.dumps(sys.executable)}",
            f"args = [{json.dumps(str(MCP_SERVER))}, {json.dumps('stdio')}]",
            "startup_timeout_s = 45",
            "trust = true",
            "",
        ]
    )


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeProvider, Daemon]]:
    fake = FakeProvider(wire=CHAT).start()
    d = make_daemon(tmp_path_factory.mktemp("tool-images"), config(fake))
    (d.workdir / "dot.png").write_bytes(PNG)
    (d.workdir / "big.png").write_bytes(PNG[:16] + bytes(6 * 1024 * 1024))
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


async def call_tool(
    client: Client, d: Daemon, fake: FakeProvider, model: str, tool: str, args: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run a turn in which the model calls `tool`; (the tool result item, the next request)."""
    fake.enqueue(Reply().tool_call(tool, args), Reply().text("seen"))
    cid = await new_conversation(client, str(d.workdir), model=model)
    await client.request("input/send", {"conversationId": cid, "text": "look at it"})
    notes = await collect_until(client, turn_ended(), 90)
    assert notes[-1]["params"]["status"] == "completed"
    [result] = completed_items(notes, "tool_result")
    for ref in result.get("images", []):
        path = d.home / "conversations" / cid / "attachments" / f"{ref['sha256']}.png"
        assert path.is_file()
    return result, fake.requests[-1].json


def last_tool_exchange(wire: str, body: dict[str, Any]) -> Any:
    if wire == CHAT:
        return body["messages"][-2:]  # the tool message, then the user message with its image
    if wire == RESPONSES:
        return body["input"][-1]
    return body["messages"][-1]["content"][0]


@pytest.mark.parametrize(
    ("model", "wire"), [("chat", CHAT), ("responses", RESPONSES), ("anthropic", ANTHROPIC)]
)
async def test_read_file_on_an_image_returns_the_image_to_a_vision_model(
    shared: tuple[FakeProvider, Daemon], client: Client, model: str, wire: str
) -> None:
    fake, d = shared
    result, body = await call_tool(client, d, fake, model, "read_file", {"path": "dot.png"})
    text = f"{d.workdir / 'dot.png'} is an image: [image: dot.png, image/png, {len(PNG)} bytes]"
    assert result["output"] == text
    assert result["images"] == [
        {"sha256": PNG_SHA, "mediaType": "image/png", "size": len(PNG), "name": "dot.png"}
    ]
    url = f"data:image/png;base64,{PNG_B64}"
    exchange = last_tool_exchange(wire, body)
    if wire == CHAT:
        tool, user = exchange
        assert tool["role"] == "tool" and tool["content"] == text
        assert user == {
            "role": "user",
            "content": [
                {"type": "text", "text": "The images returned by the read_file call above:"},
                {"type": "image_url", "image_url": {"url": url}},
            ],
        }
    elif wire == RESPONSES:
        assert exchange["type"] == "function_call_output"
        assert exchange["output"] == [
            {"type": "input_text", "text": text},
            {"type": "input_image", "image_url": url, "detail": "auto"},
        ]
    else:
        assert exchange["type"] == "tool_result"
        assert exchange["content"] == [
            {"type": "text", "text": text},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64},
            },
        ]


async def test_a_model_without_vision_reads_a_notice_instead(
    shared: tuple[FakeProvider, Daemon], client: Client
) -> None:
    fake, d = shared
    _, body = await call_tool(client, d, fake, "blind", "read_file", {"path": "dot.png"})
    assert "image_url" not in json.dumps(body)
    tool = body["messages"][-1]
    assert tool["role"] == "tool"
    assert tool["content"].endswith(
        f"[image: dot.png, image/png, {len(PNG)} bytes] "
        "(not shown: this model does not accept images)"
    )


async def test_read_file_on_an_image_over_5_mib_is_a_clear_error(
    shared: tuple[FakeProvider, Daemon], client: Client
) -> None:
    fake, d = shared
    result, body = await call_tool(client, d, fake, "chat", "read_file", {"path": "big.png"})
    size = 16 + 6 * 1024 * 1024
    assert result["isError"] is True and "images" not in result
    assert result["output"] == (
        f"{d.workdir / 'big.png'} is an image of {size} bytes; images may be at most "
        "5242880 bytes (5 MiB): not shown."
    )
    assert "image_url" not in json.dumps(body)


@pytest.mark.timeout(120)
async def test_an_mcp_tools_image_is_stored_and_passed_on(
    shared: tuple[FakeProvider, Daemon], client: Client
) -> None:
    fake, d = shared
    pixel = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
    )
    result, body = await call_tool(client, d, fake, "anthropic", "mcp__t__picture", {})
    assert result["images"] == [
        {"sha256": hashlib.sha256(pixel).hexdigest(), "mediaType": "image/png", "size": 68}
    ]
    block = last_tool_exchange(ANTHROPIC, body)
    assert block["content"][-1]["source"]["data"] == base64.b64encode(pixel).decode()
