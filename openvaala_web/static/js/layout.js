// The page's frame: the conversation drawer on narrow screens, the tabs (ARIA tab pattern with
// arrow keys), and Escape closing whatever small form or drawer is open.
//
// Below NARROW_PX the sidebar is an off-canvas drawer opened from the header's ☰ button; opening
// a conversation closes it. On wider screens the same element is the fixed left column.

import { $ } from "./dom.js";

export const NARROW_QUERY = "(max-width: 760px)";

export class Drawer {
  constructor() {
    this.sidebar = $("#sidebar");
    this.backdrop = $("#drawer-backdrop");
    this.toggle = $("#drawer-open");
    this.narrow = window.matchMedia(NARROW_QUERY);
    this.toggle.addEventListener("click", () => this.open());
    $("#drawer-close").addEventListener("click", () => this.close());
    this.backdrop.addEventListener("click", () => this.close());
    this.narrow.addEventListener("change", () => this.close());
  }

  get isOpen() {
    return document.body.classList.contains("drawer-open");
  }

  open() {
    document.body.classList.add("drawer-open");
    this.backdrop.hidden = false;
    this.toggle.setAttribute("aria-expanded", "true");
    // The drawer is a modal layer on a phone: focus goes into it.
    const search = $("#search");
    (search || this.sidebar).focus();
  }

  close({ restoreFocus = false } = {}) {
    if (!this.isOpen) return;
    document.body.classList.remove("drawer-open");
    this.backdrop.hidden = true;
    this.toggle.setAttribute("aria-expanded", "false");
    if (restoreFocus && this.narrow.matches) this.toggle.focus();
  }
}

/** The skip link moves the focus itself: following `#composer-text` would change the address's
 * fragment, which names the open conversation. */
export function bindSkipLink() {
  const link = $(".skip-link");
  if (!link) return;
  link.addEventListener("click", (event) => {
    event.preventDefault();
    const target = $(link.getAttribute("href"));
    if (target) target.focus();
  });
}

/**
 * The tab pattern (WAI-ARIA Authoring Practices): one tab in the tab order, Left/Right/Home/End
 * move between tabs and select them.
 * @param {HTMLElement} tablist
 * @param {(name: string) => void} select called with the tab's id without "tab-"
 */
export function bindTabs(tablist, select) {
  const tabs = () => [...tablist.querySelectorAll("[role='tab']")];
  tablist.addEventListener("keydown", (event) => {
    const list = tabs();
    const index = list.indexOf(document.activeElement);
    if (index < 0) return;
    let next = -1;
    if (event.key === "ArrowRight") next = (index + 1) % list.length;
    else if (event.key === "ArrowLeft") next = (index - 1 + list.length) % list.length;
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = list.length - 1;
    if (next < 0) return;
    event.preventDefault();
    list[next].focus();
    select(list[next].id.replace(/^tab-/, ""));
  });
}

/** Mark `name` selected in the tablist (aria-selected and the roving tabindex). */
export function markTab(tablist, name) {
  for (const tab of tablist.querySelectorAll("[role='tab']")) {
    const on = tab.id === `tab-${name}`;
    tab.classList.toggle("active", on);
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
  }
}

/**
 * Escape closes the innermost open thing: a form registered here (its cancel action), else the
 * drawer. Forms register `{el, close}`; a form counts as open when its element is shown.
 */
export class EscapeStack {
  constructor(drawer) {
    this.drawer = drawer;
    this.entries = [];
    document.addEventListener("keydown", (event) => {
      if (event.key !== "Escape" || event.defaultPrevented) return;
      const active = document.activeElement;
      const open = this.entries.filter((e) => e.isOpen() && e.el.isConnected);
      // The form holding the focus first; otherwise the last registered open one.
      const target = open.find((e) => active && e.el.contains(active)) || open[open.length - 1];
      if (target) {
        event.preventDefault();
        target.close();
        return;
      }
      if (this.drawer.isOpen) {
        event.preventDefault();
        this.drawer.close({ restoreFocus: true });
      }
    });
  }

  /**
   * @param {HTMLElement} el @param {() => void} close
   * @param {() => boolean} [isOpen] when shown is not the same as open (the actions menu)
   */
  add(el, close, isOpen = () => !el.hidden) {
    this.entries.push({ el, close, isOpen });
  }
}

/** A sidebar section its button shows and hides (MCP servers, signed-in browsers): opening it
 * reads its content afresh (`refresh`, the subclass's). */
export class TogglePanel {
  constructor(el, button) {
    this.el = el;
    this.button = button;
    button.addEventListener("click", () => (this.el.hidden ? this.open() : this.close()));
  }

  async open() {
    this.el.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    await this.refresh();
  }

  close() {
    this.el.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
  }

  async refresh() {}
}
