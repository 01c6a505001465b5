// A folder picker over `directories/list` (docs/protocol.md): the daemon lists the directories its
// user can open, `~` is that user's home. Used for the directory a new conversation starts in
// (the start bar over the message box, and "Browse…" in the New form).

import { h } from "./dom.js";

export class DirPicker {
  /**
   * @param {HTMLElement} el the picker's (empty, hidden) section
   * @param {(path: string) => Promise<object>} list directories/list's result for a path
   * @param {string} prefix for the ids of its fields (two pickers share the page)
   */
  constructor(el, list, prefix) {
    this.el = el;
    this.list = list;
    this.prefix = prefix;
    this.listing = null;
    this.recent = [];
    this.onChoose = null;
    this.onClose = null;
  }

  /** Show the picker at `path`; `onChoose(path)` gets the directory the user picks. */
  async open(path, { recent = [], onChoose, onClose } = {}) {
    this.recent = recent;
    this.onChoose = onChoose;
    this.onClose = onClose;
    this.el.hidden = false;
    await this.go(path || "~", { focus: true });
  }

  close() {
    if (this.el.hidden) return;
    this.el.hidden = true;
    this.el.replaceChildren();
    if (this.onClose) this.onClose();
  }

  async go(path, { focus = false } = {}) {
    try {
      this.listing = await this.list(path);
      this.render("");
    } catch (err) {
      this.render(err.message || String(err), path);
    }
    if (focus) this.el.querySelector("input").focus();
  }

  render(error, typed = null) {
    const listing = this.listing;
    const here = listing ? listing.path : "";
    const input = h("input", {
      id: `${this.prefix}-path`, type: "text", value: typed ?? here, autocomplete: "off", spellcheck: "false",
    });
    // No <form>: the New form's picker sits inside that form, and forms do not nest.
    const form = h(
      "div",
      { class: "picker-path" },
      h("label", { for: input.id }, "Directory (absolute, or ~ for your home)"),
      h("div", { class: "form-row" }, input, h("button", { type: "button", onclick: () => this.go(input.value, { focus: true }) }, "Go")),
    );
    input.addEventListener("keydown", (event) => {
      if (event.key !== "Enter") return;
      event.preventDefault();
      this.go(input.value, { focus: true });
    });
    const choose = () => {
      const onChoose = this.onChoose;
      this.close();
      if (onChoose) onChoose(here);
    };
    const go = (path) => () => this.go(path, { focus: true });
    const dirs = listing ? listing.directories : [];
    this.el.replaceChildren(
      form,
      h("p", { class: "form-error", role: "alert" }, error),
      h(
        "div",
        { class: "form-row picker-actions" },
        h("button", { type: "button", class: "picker-use", disabled: !listing, onclick: choose }, "Use this directory"),
        h("button", { type: "button", disabled: !(listing && listing.parent), onclick: listing && listing.parent ? go(listing.parent) : null }, "Up"),
        h("button", { type: "button", onclick: go("~") }, "Home"),
        h("button", { type: "button", onclick: () => this.close() }, "Cancel"),
      ),
      this.recent.length
        ? h(
            "div",
            { class: "picker-group" },
            h("h3", { id: `${this.prefix}-recent` }, "Recent"),
            h("ul", { "aria-labelledby": `${this.prefix}-recent` }, this.recent.map((p) => h("li", {}, h("button", { type: "button", class: "picker-dir", onclick: go(p) }, p)))),
          )
        : null,
      h(
        "div",
        { class: "picker-group" },
        h("h3", { id: `${this.prefix}-dirs` }, here ? `Folders in ${here}` : "Folders"),
        dirs.length
          ? h("ul", { "aria-labelledby": `${this.prefix}-dirs` }, dirs.map((d) => h("li", {}, h("button", { type: "button", class: "picker-dir", onclick: go(d.path) }, d.name))))
          : h("p", { class: "hint" }, listing ? "No folders here." : ""),
        listing && listing.truncated ? h("p", { class: "hint" }, "Only the first 1,000 are shown: type a path above.") : null,
      ),
    );
  }
}
