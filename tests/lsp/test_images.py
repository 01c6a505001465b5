"""Image URIs in the editor bridge's prompt request: `openvaala/prompt` with `images: [file://…]`
sends the images with the message (the daemon stores them and the model gets them), and a URI
that is not an image is refused before anything is sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.e2e.test_images_e2e import PNG, PNG_SHA
from tests.lsp.harness import Recorder, request
from tests.support.daemon import Daemon


async def test_prompt_sends_image_uris(
    lsp: tuple[LanguageClient, Recorder], daemon: Daemon, tmp_path: Path
) -> None:
    client, rec = lsp
    shot = tmp_path / "a shot.png"
    shot.write_bytes(PNG)
    cid = (await request(client, "openvaala/conversations/new", {}))["conversation"][
        "conversationId"
    ]
    result = await request(
        client,
        "openvaala/prompt",
        {"conversationId": cid, "text": "what is this?", "images": [shot.as_uri()]},
    )
    assert result["status"] == "completed"
    items = [e["params"]["item"] for e in rec.events if e["method"] == "item/completed"]
    [user] = [i for i in items if i["type"] == "user_message"]
    assert user["images"] == [
        {"sha256": PNG_SHA, "mediaType": "image/png", "size": len(PNG), "name": "a shot.png"}
    ]
    [answer] = [i for i in items if i["type"] == "agent_message"]
    assert f"I received 1 image(s): image/png of {len(PNG)} bytes." in answer["text"]
    stored = daemon.home / "conversations" / cid / "attachments" / f"{PNG_SHA}.png"
    assert stored.read_bytes() == PNG

    # Not an image: refused with its name, and no turn starts.
    notes = tmp_path / "notes.txt"
    notes.write_text("words")
    with pytest.raises(JsonRpcException) as refused:
        await request(
            client,
            "openvaala/send",
            {"conversationId": cid, "text": "and this?", "images": [notes.as_uri()]},
        )
    assert "notes.txt is not a PNG, JPEG, GIF or WebP image" in str(refused.value)
    with pytest.raises(JsonRpcException) as relative:
        await request(
            client, "openvaala/send", {"conversationId": cid, "text": "x", "images": ["a.png"]}
        )
    assert "neither a file:// URI nor an absolute path" in str(relative.value)
