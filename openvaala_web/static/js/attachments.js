// Images in the web UI: attach (button or paste) in the composer, thumbnails in the transcript.
//
// Pending images are read in the browser as data: URLs (the CSP allows `img-src 'self' data:`),
// shown in a tray above the composer's buttons, and sent with the message as `input/send`
// `images: [{data, mediaType, name}]` (docs/protocol.md). The daemon checks the kind from the
// bytes and the size again; the checks here only spare a round trip.
// Thumbnails of sent images load from `attachments/<conversationId>/<sha256>`, relative to the
// app's path, where the session cookie authenticates them (docs/security.md).

import { h } from "./dom.js";

export const MEDIA_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
export const MAX_BYTES = 5 * 1024 * 1024;
export const MAX_IMAGES = 4;

function readDataUrl(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

export class AttachmentTray {
  /**
   * @param {HTMLFormElement} composer the composer form
   * @param {HTMLTextAreaElement} text its text box (images pasted into it are attached)
   * @param {(message: string) => void} warn how to tell the user an image was not taken
   */
  constructor(composer, text, warn) {
    this.images = []; // {name, mediaType, dataUrl}
    this.warn = warn;
    this.input = h("input", {
      type: "file",
      id: "attach-input",
      accept: MEDIA_TYPES.join(","),
      multiple: true,
      hidden: true,
      "aria-hidden": "true",
      tabindex: "-1",
    });
    this.button = h(
      "button",
      { type: "button", id: "attach", title: "Attach images (PNG, JPEG, GIF or WebP, up to 5 MiB; or paste one)", "aria-label": "Attach images" },
      "Attach",
    );
    this.tray = h("ul", { id: "attachments", class: "attachment-tray", hidden: true, "aria-label": "Images to send" });
    this.button.addEventListener("click", () => this.input.click());
    this.input.addEventListener("change", async () => {
      await this.addFiles([...this.input.files]);
      this.input.value = "";
    });
    text.addEventListener("paste", (event) => {
      const files = [...(event.clipboardData?.files || [])].filter((f) => f.type.startsWith("image/"));
      if (!files.length) return;
      event.preventDefault();
      this.addFiles(files);
    });
    // Files dropped on the composer are attached like pasted ones.
    composer.addEventListener("dragover", (event) => {
      if ([...(event.dataTransfer?.types || [])].includes("Files")) event.preventDefault();
    });
    composer.addEventListener("drop", (event) => {
      const files = [...(event.dataTransfer?.files || [])];
      if (!files.length) return;
      event.preventDefault();
      this.addFiles(files);
    });
    const row = composer.querySelector(".composer-row");
    composer.insertBefore(this.tray, row);
    (row || composer).prepend(this.button, this.input);
  }

  setEnabled(enabled) {
    this.button.disabled = !enabled;
  }

  get count() {
    return this.images.length;
  }

  async addFiles(files) {
    for (const file of files) {
      if (this.images.length >= MAX_IMAGES) {
        this.warn(`At most ${MAX_IMAGES} images per message.`);
        return;
      }
      if (!MEDIA_TYPES.includes(file.type)) {
        this.warn(`${file.name || "That file"} is not a PNG, JPEG, GIF or WebP image.`);
        continue;
      }
      if (file.size > MAX_BYTES) {
        this.warn(`${file.name || "That image"} is larger than 5 MiB.`);
        continue;
      }
      const dataUrl = await readDataUrl(file);
      this.images.push({ name: file.name || "pasted image", mediaType: file.type, dataUrl });
    }
    this.render();
  }

  /** Put back the images of a withdrawn or rewound message (`[ImageRef]`), read from the
   * daemon: from the open conversation (its id is the address's fragment). */
  async restore(refs) {
    const cid = location.hash.slice(1);
    for (const ref of refs || []) {
      if (this.images.length >= MAX_IMAGES) break;
      try {
        // Relative: under the app's path, where the session cookie goes (docs/security.md).
        const response = await fetch(`attachments/${encodeURIComponent(cid)}/${encodeURIComponent(ref.sha256)}`);
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const blob = await response.blob();
        const dataUrl = await readDataUrl(blob);
        this.images.push({ name: ref.name || "image", mediaType: ref.mediaType, dataUrl });
      } catch (err) {
        this.warn(`Could not put ${ref.name || "an image"} back: ${err.message}.`);
      }
    }
    this.render();
  }

  /** What input/send takes: [{data, mediaType, name}] (base64 without the data: prefix). */
  params() {
    return this.images.map((i) => ({ data: i.dataUrl.slice(i.dataUrl.indexOf(",") + 1), mediaType: i.mediaType, name: i.name }));
  }

  clear() {
    this.images = [];
    this.render();
  }

  render() {
    this.tray.hidden = !this.images.length;
    this.tray.replaceChildren(
      ...this.images.map((image, index) =>
        h(
          "li",
          { class: "attachment" },
          h("img", { src: image.dataUrl, alt: image.name, class: "thumb" }),
          h("span", { class: "attachment-name" }, image.name),
          h(
            "button",
            {
              type: "button",
              class: "attachment-remove",
              "aria-label": `Remove ${image.name}`,
              onclick: () => {
                this.images.splice(index, 1);
                this.render();
              },
            },
            "×",
          ),
        ),
      ),
    );
  }
}

/** A short mark for a waiting message's images ("🖼 2"), or null. */
export function imageMark(input) {
  const count = Array.isArray(input.images) ? input.images.length : 0;
  if (!count) return null;
  return h("span", { class: "waiting-images", title: `${count} image${count > 1 ? "s" : ""}` }, `🖼 ${count}`);
}

/** Thumbnails of an item's images (`images: [ImageRef]`), or null when it has none. */
export function thumbnails(item) {
  const refs = Array.isArray(item.images) ? item.images : [];
  if (!refs.length) return null;
  // The app keeps the open conversation's id in the address's fragment; an item of a fork's
  // older history names the conversation that holds its images.
  const cid = item.fromConversationId || location.hash.slice(1);
  return h(
    "div",
    { class: "thumbs" },
    refs.map((ref) => {
      const label = `${ref.name || "image"} (${ref.mediaType}, ${ref.size} bytes)`;
      const url = `attachments/${encodeURIComponent(cid)}/${encodeURIComponent(ref.sha256)}`; // relative: the app's path (docs/security.md)
      return h(
        "a",
        { class: "thumb-link", href: url, target: "_blank", rel: "noopener", title: label },
        h("img", { class: "thumb", src: url, alt: label, loading: "lazy" }),
      );
    }),
  );
}
