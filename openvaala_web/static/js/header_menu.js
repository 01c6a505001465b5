// The conversation header's actions (History, Agent, Model, Rename, Archive, Delete): a row of
// buttons while the header has the room for them (on a line of their own at most), else one
// "Actions" button whose list drops down (a disclosure: aria-expanded, Escape and a click
// elsewhere close it). The decision is measured, not a fixed breakpoint: the Agent and Model buttons name the agent and
// model, whose length varies (docs/design.md, "The web UI at every width"). With no conversation
// open, none of it shows.

import { $ } from "./dom.js";

const COLLAPSED = "actions-collapsed";

export class ActionsMenu {
  /** @param {import("./layout.js").EscapeStack} escape */
  constructor(escape) {
    this.header = $("#conv-header");
    this.box = $(".conv-actions", this.header);
    this.toggle = $("#actions-menu");
    this.list = $("#actions-list");
    this.toggle.addEventListener("click", () => (this.isOpen ? this.close() : this.open()));
    // A chosen action closes the menu; Delete asks to be clicked again, so it stays open then.
    this.list.addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (button && this.collapsed && !button.classList.contains("confirm")) this.close();
    });
    document.addEventListener("click", (event) => {
      if (this.isOpen && !this.box.contains(event.target)) this.close();
    });
    escape.add(this.list, () => this.close({ restoreFocus: true }), () => this.isOpen);
    // The main column's width is what the header has; it does not depend on the header's content.
    new ResizeObserver(() => this.layout()).observe($("#main"));
  }

  get collapsed() {
    return this.header.classList.contains(COLLAPSED);
  }

  get isOpen() {
    return this.collapsed && !this.list.hidden;
  }

  open() {
    this.list.hidden = false;
    this.toggle.setAttribute("aria-expanded", "true");
  }

  close({ restoreFocus = false } = {}) {
    if (!this.collapsed) return;
    const inside = this.list.contains(document.activeElement);
    this.list.hidden = true;
    this.toggle.setAttribute("aria-expanded", "false");
    if (restoreFocus || inside) this.toggle.focus();
  }

  /** With no conversation open none of its actions would work: neither the row nor the
   * Actions button shows then (a menu of disabled entries is only noise, on a phone most). */
  setAvailable(available) {
    if (!available) this.close();
    this.box.hidden = !available;
  }

  /** Show the row or the menu, whichever fits; call again when the buttons' words change. */
  layout() {
    if (this.box.hidden) return; // measured when it shows again (`setAvailable`, then here)
    const wasOpen = this.isOpen;
    this.header.classList.remove(COLLAPSED);
    this.toggle.hidden = true;
    this.list.hidden = false;
    const collapse = this.list.scrollWidth > this.room();
    this.header.classList.toggle(COLLAPSED, collapse);
    this.toggle.hidden = !collapse;
    this.list.hidden = collapse && !wasOpen;
    this.toggle.setAttribute("aria-expanded", String(collapse && wasOpen));
  }

  /** The header's inner width: the actions may take a line of their own (the header wraps). */
  room() {
    const style = getComputedStyle(this.header);
    return this.header.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  }
}
