"""Images in the VS Code chat panel's composer: one picked with the Image button and one pasted
into the message go with the next message, as base64 through the bridge's `openvaala/send`
(docs/editors.md, "The chat panel"); the daemon stores them and the model gets them. The panel's
page in Chromium under chat_view.js's HTML, the real bridge and daemon (the demo model, which
says what images it received): test_vscode_panel.py's harness."""

from __future__ import annotations

import base64
from typing import Any

from playwright.async_api import FilePayload, Page, expect

from tests.e2e.test_images_e2e import PNG, PNG_SHA
from tests.lsp.harness import PACED_CONFIG
from tests.lsp.test_vscode_panel import html, media, open_daemon_panel, pytestmark
from tests.support.daemon import Daemon

__all__ = ["html", "media", "pytestmark"]  # the harness's fixtures, and its skip

PASTE = """(b64) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], "pasted.png", { type: "image/png" }));
  const text = document.getElementById("text");
  text.focus();
  const init = { clipboardData: data, bubbles: true, cancelable: true };
  text.dispatchEvent(new ClipboardEvent("paste", init));
}"""


async def test_images_picked_and_pasted_go_with_the_message(
    daemon_factory: Any, media: str, html: str
) -> None:
    daemon: Daemon = daemon_factory(config=PACED_CONFIG)
    async with open_daemon_panel(daemon, media, html) as (page, relay):
        await page.click("#new")
        await expect(page.locator("#picker")).not_to_have_value("")
        cid = await page.locator("#picker").input_value()

        # Picked from a file: a thumbnail until it is sent with the message.
        shot: FilePayload = {"name": "shot.png", "mimeType": "image/png", "buffer": PNG}
        await page.set_input_files("#image-file", files=[shot])
        await expect(page.locator("#images img")).to_have_count(1)
        await page.fill("#text", "what is this?")
        await page.press("#text", "Control+Enter")
        reply = page.locator("article.msg.agent")
        await expect(reply.first).to_contain_text(f"I received 1 image(s): image/png of {len(PNG)}")
        await expect(page.locator("#images img")).to_have_count(0)

        # Pasted into the composer, sent alone (no text).
        await page.wait_for_selector("body[data-status=idle]")
        await page.evaluate(PASTE, base64.b64encode(PNG).decode())
        await expect(page.locator("#images img")).to_have_count(1)
        await page.press("#text", "Control+Enter")
        await expect(reply).to_have_count(2)
        await expect(reply.last).to_contain_text("I received 1 image(s)")

        users = [
            e["params"]["item"]
            for e in relay.rec.events
            if e["method"] == "item/completed" and e["params"]["item"]["type"] == "user_message"
        ]
        assert [[(i["sha256"], i["name"]) for i in u["images"]] for u in users] == [
            [(PNG_SHA, "shot.png")],
            [(PNG_SHA, "pasted.png")],
        ]
        stored = daemon.home / "conversations" / cid / "attachments" / f"{PNG_SHA}.png"
        assert stored.read_bytes() == PNG


async def open_conversation(page: Page, cid: str) -> None:
    await page.evaluate("c => window.postMessage({type: 'open', conversationId: c}, '*')", cid)
    await expect(page.locator("#picker")).to_have_value(cid)


async def test_pending_images_belong_to_their_conversation(
    daemon_factory: Any, media: str, html: str
) -> None:
    daemon: Daemon = daemon_factory(config=PACED_CONFIG)
    async with open_daemon_panel(daemon, media, html) as (page, relay):
        picker, thumbs = page.locator("#picker"), page.locator("#images img")
        await page.click("#new")
        await expect(picker).not_to_have_value("")
        first = await picker.input_value()
        shot: FilePayload = {"name": "first.png", "mimeType": "image/png", "buffer": PNG}
        await page.set_input_files("#image-file", files=[shot])
        await expect(thumbs).to_have_count(1)

        # Another conversation: its composer has none of them; one pasted there stays there.
        await page.click("#new")
        await expect(picker).not_to_have_value(first)
        second = await picker.input_value()
        await expect(thumbs).to_have_count(0)
        await page.evaluate(PASTE, base64.b64encode(PNG).decode())
        await expect(thumbs).to_have_count(1)
        await expect(thumbs).to_have_attribute("title", "pasted.png")

        # Back (as the palette's Open Conversation… does: an empty conversation is not in the
        # picker yet): the first one's own image, sent with its message and only there.
        await open_conversation(page, first)
        await expect(thumbs).to_have_count(1)
        await expect(thumbs).to_have_attribute("title", "first.png")
        await page.fill("#text", "what is this?")
        await page.press("#text", "Control+Enter")
        await expect(page.locator("article.msg.agent")).to_contain_text("I received 1 image(s)")
        await expect(thumbs).to_have_count(0)
        sent = [
            (e["conversationId"], [i["name"] for i in e["params"]["item"].get("images", [])])
            for e in relay.rec.events
            if e["method"] == "item/completed" and e["params"]["item"]["type"] == "user_message"
        ]
        assert sent == [(first, ["first.png"])]

        # The second still has its pasted image waiting.
        await open_conversation(page, second)
        await expect(thumbs).to_have_attribute("title", "pasted.png")
