"""Images in request assembly, without a daemon: parallel tool calls whose results carry images
(Chat Completions keeps the group's tool messages together and sends the images after them), a
model without the data (placeholders), and items with images never taken from the wire cache."""

from __future__ import annotations

import itertools
from typing import Any, cast

from openvaala_server.config import ModelConfig
from openvaala_server.domain.images import ImageRef
from openvaala_server.domain.records import Item
from openvaala_server.domain.usage import IMAGE_TOKENS, estimate_item
from openvaala_server.models import anthropic, http, openai_chat, openai_responses
from openvaala_server.models.base import ModelRequest
from tests.support.json import j

_ids = itertools.count()
REF: ImageRef = {"sha256": "a" * 64, "mediaType": "image/png", "size": 3, "name": "x.png"}
DATA = {"a" * 64: "AAAA"}


def item(kind: str, **fields: Any) -> Item:
    made: Item = {"itemId": f"{next(_ids):032x}", "type": kind, "status": "completed"}
    made.update(cast(Item, fields))
    return made


def call(call_id: str) -> Item:
    return item("tool_call", callId=call_id, name="read_file", arguments={"path": call_id})


def result(call_id: str, **fields: Any) -> Item:
    return item("tool_result", callId=call_id, name="read_file", output=call_id, **fields)


ITEMS = [
    item("user_message", text="look at both"),
    call("c1"),
    call("c2"),
    result("c1", images=[REF]),
    result("c2"),
    item("agent_message", text="done"),
]


def request(provider: str, images: dict[str, str]) -> ModelRequest:
    model = ModelConfig(provider, provider, "m", 1000, 100, vision=True)
    return ModelRequest(model=model, instructions="", items=ITEMS, images=images)


def test_chat_sends_a_tool_results_images_after_the_groups_tool_messages() -> None:
    cache: http.WireCache[openai_chat.Wire] = http.WireCache(openai_chat.item_wire)
    for _ in range(2):  # the second time through the cache: the same body
        messages = openai_chat.to_messages(request("openai", DATA), cache)
        roles = [m["role"] for m in messages]
        assert roles == ["user", "assistant", "tool", "tool", "user", "assistant"]
        assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "c1"}
        follow = j(messages[4])["content"]
        assert follow[1] == {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64,AAAA"},
        }
        assert all("_openvaala" not in str(m) for m in messages)


def test_without_the_data_every_format_sends_a_placeholder() -> None:
    note = "[image: x.png, image/png, 3 bytes] (not shown: this model does not accept images)"
    chat = openai_chat.to_messages(request("openai", {}))
    assert [m["role"] for m in chat] == ["user", "assistant", "tool", "tool", "assistant"]
    assert chat[2]["content"] == f"c1\n{note}"
    responses = openai_responses.to_input(ITEMS, "current_turn", None, {})
    assert j(responses[3])["output"] == f"c1\n{note}"
    claude = anthropic.to_messages(ITEMS, None, {})
    assert j(claude[2])["content"][0]["content"] == [{"type": "text", "text": f"c1\n{note}"}]


def test_anthropic_puts_a_messages_images_before_its_text() -> None:
    items = [item("user_message", text="what?", images=[REF, REF])]
    [message] = anthropic.to_messages(items, None, DATA)
    assert [b["type"] for b in message["content"]] == ["image", "image", "text"]


def test_each_image_counts_in_the_context_estimate() -> None:
    plain = item("user_message", text="look")
    with_two: Item = {**plain, "images": [REF, REF]}
    assert estimate_item(with_two) - estimate_item(plain) == 2 * IMAGE_TOKENS
