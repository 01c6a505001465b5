"""Images in the browser: attached with the button or pasted into the composer, sent with the
message, and shown as thumbnails in the transcript — loaded from the daemon's authenticated
`/attachments` route with the session cookie, again after a reload."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Locator, expect

from tests.e2e.test_images_e2e import GIF, PNG, PNG_B64, PNG_SHA
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def loaded(img: Locator) -> None:
    """The <img> finished loading a real image (a 401 or 404 leaves naturalWidth at 0)."""
    expect(img).to_be_visible()
    img.page.wait_for_function(
        "(el) => el.complete && el.naturalWidth > 0", arg=img.element_handle()
    )


def test_an_attached_image_is_sent_and_shown_as_a_thumbnail(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, tmp_path: Path
) -> None:
    daemon = daemon_factory(paced(0))
    ui = ui_factory(daemon)
    ui.login()
    cid = ui.new_conversation()
    page = ui.page
    picture = tmp_path / "dot.png"
    picture.write_bytes(PNG)
    page.set_input_files("#attach-input", str(picture))
    tray = page.locator("#attachments .attachment")
    expect(tray).to_have_count(1)
    expect(tray.locator(".attachment-name")).to_have_text("dot.png")
    ui.send("what is this?")
    expect(tray).to_have_count(0)  # sent: the tray empties with the text box

    message = page.locator(".item[data-type='user_message']")
    thumb = message.locator("img.thumb")
    expect(thumb).to_have_attribute("src", f"attachments/{cid}/{PNG_SHA}")
    loaded(thumb)
    agent = page.locator(".item[data-type='agent_message'][data-status='completed']")
    expect(agent).to_contain_text(f"I received 1 image(s): image/png of {len(PNG)} bytes.")
    ui.screenshot("image-thumbnail")

    page.reload()
    ui.wait_online()
    loaded(page.locator(".item[data-type='user_message'] img.thumb"))

    # Restart from here: the message goes back to the composer with its image.
    message.hover()
    message.locator(".act-restart").click()
    page.wait_for_function("(old) => location.hash.slice(1) !== old", arg=cid)
    expect(page.locator("#composer-text")).to_have_value("what is this?")
    expect(tray.locator(".attachment-name")).to_have_text("dot.png")
    loaded(tray.locator("img.thumb"))
    assert ui.console_errors == []


def test_a_pasted_image_alone_is_a_message_and_a_wrong_file_is_refused(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, tmp_path: Path
) -> None:
    daemon = daemon_factory(paced(0))
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    page.focus("#composer-text")
    page.evaluate(
        """(b64) => {
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          const data = new DataTransfer();
          data.items.add(new File([bytes], "pasted.png", { type: "image/png" }));
          const box = document.querySelector("#composer-text");
          const init = { clipboardData: data, bubbles: true, cancelable: true };
          box.dispatchEvent(new ClipboardEvent("paste", init));
        }""",
        PNG_B64,
    )
    expect(page.locator("#attachments .attachment")).to_have_count(1)
    page.click("#send")  # no text: the image alone is the message
    expect(page.locator("#attachments .attachment")).to_have_count(0)
    loaded(page.locator(".item[data-type='user_message'] img.thumb"))
    ui.wait_idle()

    # A file dropped on the composer is attached like a pasted one.
    page.evaluate(
        """(b64) => {
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          const data = new DataTransfer();
          data.items.add(new File([bytes], "dropped.png", { type: "image/png" }));
          const init = { dataTransfer: data, bubbles: true, cancelable: true };
          document.querySelector("#composer-text").dispatchEvent(new DragEvent("drop", init));
        }""",
        PNG_B64,
    )
    expect(page.locator("#attachments .attachment-name")).to_have_text(["dropped.png"])
    page.click("#attachments .attachment-remove")
    expect(page.locator("#attachments .attachment")).to_have_count(0)

    # A file that is not an image is not attached, and the user is told.
    notes = tmp_path / "notes.txt"
    notes.write_text("not a picture")
    page.set_input_files("#attach-input", str(notes))
    expect(page.locator("#errors")).to_contain_text("notes.txt is not a PNG, JPEG, GIF or WebP")
    expect(page.locator("#attachments .attachment")).to_have_count(0)
    # Two images at once, one removed before sending.
    gif = tmp_path / "tiny.gif"
    gif.write_bytes(GIF)
    png = tmp_path / "dot.png"
    png.write_bytes(PNG)
    page.set_input_files("#attach-input", [str(gif), str(png)])
    expect(page.locator("#attachments .attachment")).to_have_count(2)
    page.click("#attachments .attachment-remove >> nth=0")
    expect(page.locator("#attachments .attachment-name")).to_have_text(["dot.png"])
    ui.send("only the png")
    expect(page.locator(".item[data-type='user_message']").last.locator("img.thumb")).to_have_count(
        1
    )


def test_a_waiting_message_shows_its_images_and_withdraw_puts_them_back(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, tmp_path: Path
) -> None:
    daemon = daemon_factory(paced(300))  # "first" is answered slowly: the second one waits
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    ui.send("first")
    expect(page.locator("#composer")).to_have_attribute("data-running", "true")
    page.select_option("#send-mode", "queue")
    picture = tmp_path / "dot.png"
    picture.write_bytes(PNG)
    page.set_input_files("#attach-input", str(picture))
    ui.send("second")
    row = page.locator("#inbox li.waiting")
    expect(row.locator(".waiting-images")).to_have_text("🖼 1")
    row.locator(".w-withdraw").click()
    expect(page.locator("#composer-text")).to_have_value("second")
    expect(page.locator("#attachments .attachment-name")).to_have_text(["dot.png"])
    loaded(page.locator("#attachments img.thumb"))
    page.click("#stop")
    ui.wait_idle()
    assert ui.console_errors == []
