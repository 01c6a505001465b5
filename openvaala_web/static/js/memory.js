// Memory and /init in the composer (docs/protocol.md "Memory", conversation/init): "# note" or
// "/remember [user] note" keeps a note for later conversations, "/memory" opens both memory files
// to read and edit, "/init" asks the agent to write or improve the repository's AGENTS.md.

import { $, h } from "./dom.js";

/** The command a composer text is, or null for a message. "## heading" stays a message. */
export function parseCommand(text) {
  const t = text.trim();
  if (t === "/init") return { name: "init" };
  if (t === "/memory") return { name: "memory" };
  const remember = /^\/remember(?:\s+(user|project))?\s+([\s\S]+)$/.exec(t);
  if (remember) return { name: "remember", scope: remember[1] || "project", text: remember[2].trim() };
  if (t.startsWith("#") && !t.startsWith("##") && t.slice(1).trim()) {
    return { name: "remember", scope: "project", text: t.slice(1).trim() };
  }
  return null;
}

export class MemoryPanel {
  /** `app`: the App (openId, call(method, params, label), showError(message, kind)). */
  constructor(app) {
    this.app = app;
    this.dialog = h(
      "dialog",
      { id: "memory-panel", "aria-label": "Memory" },
      h("div", { class: "memory-head" }, h("h2", {}, "Memory"), h("button", { type: "button", class: "memory-close" }, "Close")),
      h("p", { class: "memory-help" }, "Notes every later conversation is given. Plain files: edit and save, or add one with # in the composer."),
      h("div", { class: "memory-files" }),
    );
    document.body.append(this.dialog);
    $(".memory-close", this.dialog).addEventListener("click", () => this.dialog.close());
  }

  async run(command) {
    const conversationId = this.app.openId;
    if (command.name === "init") {
      await this.app.call("conversation/init", { conversationId }, "/init");
    } else if (command.name === "remember") {
      const saved = await this.app.call("memory/remember", { conversationId, scope: command.scope, text: command.text }, "Remember");
      if (saved && saved.path) this.app.showError(`Remembered in ${saved.path}.`, "info");
    } else if (command.name === "memory") {
      await this.open();
    }
  }

  async open() {
    const result = await this.app.call("memory/read", { conversationId: this.app.openId }, "Memory");
    if (!result || !result.files) return;
    $(".memory-files", this.dialog).replaceChildren(...result.files.map((file) => this.fileSection(file)));
    if (!this.dialog.open) this.dialog.showModal();
  }

  fileSection(file) {
    const area = h("textarea", { rows: 6, spellcheck: "false", "aria-label": `${file.scope} memory, ${file.path}` });
    area.value = file.text;
    const status = h("span", { class: "memory-status", role: "status" });
    const save = async () => {
      const saved = await this.app.call("memory/write", { conversationId: this.app.openId, scope: file.scope, text: area.value }, "Save memory");
      status.textContent = saved ? "Saved." : "";
    };
    return h(
      "section",
      { class: "memory-file", dataset: { scope: file.scope } },
      h("h3", {}, `${file.scope === "user" ? "Yours (every project)" : "This project"}: `, h("code", {}, file.path)),
      area,
      h("div", {}, h("button", { type: "button", class: "memory-save", onclick: save }, "Save"), status),
    );
  }
}
