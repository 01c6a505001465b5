// The conversation list: newest first, search, the archived toggle, and "New conversation"
// (which asks for the working directory, agent and model, defaulting to the most recent
// conversation's directory and the configured default agent).
//
// Long lists load page by page (conversation/list `nextCursor`) as the user scrolls to the end.
// The list is live: the app watches it (conversation/watchList) and hands each
// conversation/listChanged to `changed` / `removed`, so another client's work shows at once.
// Forks and rewinds say so, with a link to the conversation they came from.

import { DirPicker } from "./dir_picker.js";
import { $, h } from "./dom.js";
import { GridKeys } from "./list_keys.js";
import { snippetNeedle, snippetNodes } from "./snippet.js";

const SEARCH_DELAY_MS = 250;
export const LIST_PAGE = 100;
// Past WINDOW_FROM loaded conversations only a window of WINDOW rows has elements, between two
// spacers standing for the rest (the DOM stays bounded at thousands, docs/design.md).
const WINDOW_FROM = 300;
const WINDOW = 200;
const WINDOW_MARGIN = 60; // rows kept above the first one on screen
const ROW_PX = 44; // a row's height until one is measured

export class Sidebar {
  /**
   * @param {HTMLElement} root
   * @param {{list: (opts: object) => Promise<{conversations: object[], nextCursor?: string}>,
   *   create: (opts: {cwd: string, agent?: string, model?: string}) => Promise<void>,
   *   open: (id: string) => void, choices?: () => Promise<{agents: object[], models: object[]}>}} actions
   */
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
    this.conversations = [];
    this.byId = new Map();
    this.nextCursor = null;
    this.loadingPage = false;
    this.currentId = null;
    this.recentCwd = "";
    this.listEl = $("#conv-list", root);
    this.search = $("#search", root);
    this.archived = $("#show-archived", root);
    this.form = $("#new-form", root);
    this.cwdInput = $("#new-cwd", root);
    this.agentSelect = $("#new-agent", root);
    this.modelSelect = $("#new-model", root);
    this.formError = $("#new-error", root);
    this.home = ""; // the daemon user's home: the New form's directory when there is no recent one
    this.picker = actions.directories ? new DirPicker($("#new-picker", root), actions.directories, "new-picker") : null;
    const browse = $("#new-browse", root);
    if (browse && this.picker) {
      browse.addEventListener("click", () => {
        browse.setAttribute("aria-expanded", "true");
        this.picker.open(this.cwdInput.value.trim() || "~", {
          recent: this.recentDirs(),
          onChoose: (path) => {
            this.cwdInput.value = path;
            this.cwdInput.focus();
          },
          onClose: () => {
            browse.setAttribute("aria-expanded", "false");
            if (document.activeElement === document.body) browse.focus();
          },
        });
      });
    } else if (browse) browse.hidden = true;
    this.timer = null;
    this.generation = 0;
    this.sentinel = h("li", { class: "list-more", role: "row", "aria-hidden": "true" }, "Loading more…");
    // One Tab stop, arrow keys inside (list_keys.js); past the last row drawn, the next page.
    this.keys = new GridKeys(this.listEl, { onEdge: (direction) => this.edge(direction) });
    this.windowStart = 0;
    this.windowed = false;
    this.rowPx = ROW_PX;
    this.topSpacer = h("li", { class: "list-spacer", role: "none", "aria-hidden": "true" });
    this.bottomSpacer = h("li", { class: "list-spacer", role: "none", "aria-hidden": "true" });
    let scrolling = false;
    this.listEl.addEventListener("scroll", () => {
      if (scrolling || !this.windowed) return;
      scrolling = true;
      requestAnimationFrame(() => {
        scrolling = false;
        this.follow();
      });
    });
    this.observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) this.loadMore();
      },
      { root: this.listEl, rootMargin: "0px 0px 300px 0px" },
    );
    this.observer.observe(this.sentinel);

    this.search.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.refresh(), SEARCH_DELAY_MS);
    });
    this.archived.addEventListener("change", () => this.refresh());
    $("#new-conv", root).addEventListener("click", () => this.openForm());
    $("#new-cancel", root).addEventListener("click", () => this.closeForm());
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submitForm();
    });
  }

  openForm() {
    this.form.hidden = false;
    this.formError.textContent = "";
    if (!this.cwdInput.value) this.cwdInput.value = this.recentCwd || this.home;
    this.cwdInput.focus();
    this.cwdInput.select();
    this.fillChoices();
  }

  /** The agents and models the daemon has configured, for the New form's pickers. */
  async fillChoices() {
    if (!this.actions.choices || !this.agentSelect) return;
    let choices;
    try {
      choices = await this.actions.choices();
    } catch {
      return; // offline: the daemon's defaults are used
    }
    const agentValue = this.agentSelect.value;
    const agents = choices.agents || [];
    this.agentSelect.replaceChildren(
      ...agents.map((a) => h("option", { value: a.name }, a.description ? `${a.name} — ${a.description}` : a.name)),
    );
    const keep = agents.find((a) => a.name === agentValue) || agents.find((a) => a.default) || agents[0];
    if (keep) this.agentSelect.value = keep.name;
    const modelValue = this.modelSelect.value;
    this.modelSelect.replaceChildren(
      h("option", { value: "" }, "The agent's model"),
      ...(choices.models || []).map((m) => h("option", { value: m.name }, m.name)),
    );
    this.modelSelect.value = modelValue;
  }

  /** The directories of the conversations loaded, newest first, each once (at most `count`). */
  recentDirs(count = 5) {
    const dirs = [];
    for (const c of this.conversations) {
      if (c.cwd && !dirs.includes(c.cwd)) dirs.push(c.cwd);
      if (dirs.length >= count) break;
    }
    return dirs;
  }

  closeForm() {
    if (this.picker) this.picker.close();
    if (this.form.contains(document.activeElement)) $("#new-conv", this.root).focus();
    this.form.hidden = true;
    this.formError.textContent = "";
  }

  async submitForm() {
    let cwd = this.cwdInput.value.trim();
    if (!cwd) {
      this.formError.textContent = "Enter the working directory (an absolute path, or ~ for your home).";
      return;
    }
    if (cwd.startsWith("~") && this.actions.directories) {
      // The daemon knows whose home `~` is (directories/list expands it).
      try {
        cwd = (await this.actions.directories(cwd)).path;
      } catch (err) {
        this.formError.textContent = err.message;
        return;
      }
    }
    const opts = { cwd };
    if (this.agentSelect && this.agentSelect.value) opts.agent = this.agentSelect.value;
    if (this.modelSelect && this.modelSelect.value) opts.model = this.modelSelect.value;
    try {
      await this.actions.create(opts);
      this.closeForm();
    } catch (err) {
      this.formError.textContent = err.message;
    }
  }

  _filters() {
    const search = this.search.value.trim();
    return { archived: this.archived.checked, search: search || undefined };
  }

  /** The first page again (search or filter changed, reconnected, or after an action). */
  async refresh() {
    const generation = ++this.generation;
    let page;
    try {
      page = await this.actions.list({ ...this._filters(), limit: LIST_PAGE });
    } catch {
      return; // offline: keep what is shown; refreshed again when back online
    }
    if (generation !== this.generation) return; // a newer refresh is on its way
    this.conversations = [];
    this.byId.clear();
    this.windowStart = 0;
    this._add(page.conversations || []);
    this.nextCursor = page.nextCursor || null;
    const f = this._filters();
    if (!f.search && !f.archived && this.conversations.length) this.recentCwd = this.conversations[0].cwd || this.recentCwd;
    this.render();
  }

  /** The next page, when the user scrolled to the end of what is shown. */
  async loadMore() {
    if (!this.nextCursor || this.loadingPage) return;
    this.loadingPage = true;
    const generation = this.generation;
    try {
      const page = await this.actions.list({ ...this._filters(), limit: LIST_PAGE, cursor: this.nextCursor });
      if (generation !== this.generation) return;
      this._add(page.conversations || []);
      this.nextCursor = page.nextCursor || null;
      this.render();
    } catch {
      // offline, or the cursor is stale (the list changed a lot): the next refresh starts over
    } finally {
      this.loadingPage = false;
    }
    // Still at the end (a tall screen, short pages): go on.
    requestAnimationFrame(() => {
      if (this.nextCursor && this._sentinelVisible()) this.loadMore();
    });
  }

  _sentinelVisible() {
    if (!this.sentinel.isConnected) return false;
    const box = this.listEl.getBoundingClientRect();
    const at = this.sentinel.getBoundingClientRect();
    return at.top <= box.bottom + 300;
  }

  _add(conversations) {
    for (const c of conversations) {
      if (this.byId.has(c.conversationId)) continue;
      this.byId.set(c.conversationId, c);
      this.conversations.push(c);
    }
  }

  _matches(c) {
    const f = this._filters();
    if (Boolean(c.archived) !== f.archived) return false;
    if (f.search) {
      // Search is the daemon's (titles and text); a live change is shown only when its title
      // matches, the rest waits for the next search.
      return (c.title || "").toLowerCase().includes(f.search.toLowerCase());
    }
    return true;
  }

  /** A conversation was saved or changed (the live list, or the open conversation's update). */
  changed(conversation) {
    if (conversation.persisted === false) return;
    const known = this.byId.get(conversation.conversationId);
    const merged = { ...(known || {}), ...conversation };
    if (!this._matches(merged)) {
      if (known) this.removed(conversation.conversationId);
      return;
    }
    this.byId.set(merged.conversationId, merged);
    if (known) this.conversations[this.conversations.indexOf(known)] = merged;
    else this.conversations.push(merged);
    if (merged.cwd && !this._filters().search) this.recentCwd = merged.cwd;
    this.render();
  }

  /** Kept for the hooks that call it: the same as `changed`. */
  updated(conversation) {
    this.changed(conversation);
  }

  removed(conversationId) {
    const known = this.byId.get(conversationId);
    if (!known) return;
    this.byId.delete(conversationId);
    this.conversations.splice(this.conversations.indexOf(known), 1);
    this.render();
  }

  select(conversationId) {
    this.currentId = conversationId;
    this.render();
  }

  render() {
    // Newest first; rows beyond the pages loaded come with the next page.
    this.conversations.sort((a, b) => (b.updatedAt || "").localeCompare(a.updatedAt || ""));
    this.root.dataset.loaded = String(this.conversations.length);
    this.root.dataset.more = String(Boolean(this.nextCursor));
    this._count();
    if (!this.conversations.length) {
      const f = this._filters();
      const empty = f.search ? "No conversation matches." : f.archived ? "No archived conversations." : "No conversations yet.";
      this.listEl.replaceChildren(h("li", { class: "empty", role: "row" }, h("span", { role: "gridcell" }, empty)));
      return;
    }
    const hadFocus = this.listEl.contains(document.activeElement);
    const total = this.conversations.length;
    this.windowed = total > WINDOW_FROM;
    const start = this.windowed ? Math.max(0, Math.min(this.windowStart, total - WINDOW)) : 0;
    const end = this.windowed ? Math.min(total, start + WINDOW) : total;
    this.windowStart = start;
    const rows = this.conversations.slice(start, end).map((c, i) => this._row(c, start + i));
    if (this.windowed) {
      // CSSOM, not a style attribute: the CSP allows the former only.
      this.topSpacer.style.height = `${start * this.rowPx}px`;
      this.bottomSpacer.style.height = `${(total - end) * this.rowPx}px`;
      rows.unshift(this.topSpacer);
      rows.push(this.bottomSpacer);
    }
    if (this.nextCursor) rows.push(this.sentinel);
    this.listEl.replaceChildren(...rows);
    this.listEl.setAttribute("aria-rowcount", this.nextCursor ? "-1" : String(total));
    if (this.windowed) {
      this._measure();
      // Drawn while scrolled elsewhere (the list grew past WINDOW_FROM under the user): catch up.
      requestAnimationFrame(() => this.follow());
    }
    this.keys.rove(this.currentId);
    // A redraw (a live change, the next page) keeps the keyboard where it was.
    const active = hadFocus && this.keys.rows().find((r) => r.dataset.key === this.keys.activeKey);
    if (active) this.keys.focusRow(active);
  }

  /** How many conversations a search found (said politely: the element is a status). */
  _count() {
    const el = $("#search-count", this.root);
    if (!el) return;
    const n = this.conversations.length;
    const more = this.nextCursor ? "+" : "";
    el.textContent = this._filters().search ? `${n}${more} conversation${n === 1 && !more ? "" : "s"} found` : "";
  }

  /** The rows' mean height, for the spacers (rows with a fork's link are taller). */
  _measure() {
    const rows = this.keys.rows();
    if (rows.length < 10) return;
    const first = rows[0].getBoundingClientRect();
    const last = rows[rows.length - 1].getBoundingClientRect();
    const mean = (last.bottom - first.top) / rows.length;
    if (mean > 8 && Math.abs(mean - this.rowPx) > 1) {
      this.rowPx = mean;
      this.topSpacer.style.height = `${this.windowStart * mean}px`;
      this.bottomSpacer.style.height = `${(this.conversations.length - this.windowStart - (rows.length)) * mean}px`;
    }
  }

  /** Scrolled: draw the window around what is on screen, when it came near the window's edge. */
  follow() {
    const total = this.conversations.length;
    const first = Math.floor(this.listEl.scrollTop / this.rowPx);
    const shown = Math.ceil(this.listEl.clientHeight / this.rowPx);
    const end = this.windowStart + WINDOW;
    const nearTop = this.windowStart > 0 && first < this.windowStart + 10;
    const nearEnd = end < total && first + shown > end - 10;
    if (!nearTop && !nearEnd) return;
    this.windowStart = Math.max(0, Math.min(first - WINDOW_MARGIN, total - WINDOW));
    this.render();
  }

  /** The keyboard went past the rows drawn: draw further (or load the next page). */
  edge(direction) {
    const total = this.conversations.length;
    if (this.windowed && direction > 0 && this.windowStart + WINDOW < total) {
      this.windowStart = Math.min(total - WINDOW, this.windowStart + WINDOW / 2);
      this.render();
    } else if (this.windowed && direction < 0 && this.windowStart > 0) {
      this.windowStart = Math.max(0, this.windowStart - WINDOW / 2);
      this.render();
    } else if (direction > 0) {
      this.loadMore();
    }
  }

  _row(c, index = 0) {
    const status = c.status || "idle";
    const origin = c.forkedFrom && c.forkedFrom.conversationId ? c.forkedFrom : null;
    const kind = origin ? (origin.kind === "rewind" ? "rewind" : "fork") : null;
    const parent = origin ? this.byId.get(origin.conversationId) : null;
    const open = h(
      "button",
      {
        type: "button",
        class: "conv-open",
        title: c.cwd || "",
        "aria-current": c.conversationId === this.currentId ? "true" : null,
        // Opened from a search snippet: at the message it came from.
        onclick: () => this.actions.open(c.conversationId, c.snippet && this._filters().search ? snippetNeedle(c.snippet) : undefined),
      },
      h("span", { class: `status-dot status-${status}`, title: status, "aria-label": `status: ${status}`, role: "img" }),
      h("span", { class: "conv-title" }, kind ? h("span", { class: `conv-kind kind-${kind}` }, kind) : null, c.title || "Untitled"),
      c.snippet && this._filters().search ? h("span", { class: "conv-snippet" }, snippetNodes(c.snippet)) : null,
      h(
        "span",
        { class: "conv-meta" },
        h("time", { datetime: c.updatedAt || "", title: fullDate(c.updatedAt) }, shortDate(c.updatedAt)),
        ` · ${basename(c.cwd)}`,
      ),
    );
    const link = origin
      ? h(
          "a",
          {
            class: "conv-origin",
            href: `#${origin.conversationId}`,
            title: `Open the conversation this ${kind} came from`,
            onclick: (event) => {
              event.preventDefault();
              this.actions.open(origin.conversationId);
            },
          },
          `${kind === "rewind" ? "rewound" : "forked"} from ${parent ? parent.title || "Untitled" : "another conversation"}`,
        )
      : null;
    return h(
      "li",
      {
        class: `conv${c.conversationId === this.currentId ? " current" : ""}${kind ? ` is-${kind}` : ""}`,
        role: "row",
        "aria-rowindex": String(index + 1),
        dataset: { conversationId: c.conversationId, status, key: c.conversationId },
      },
      h("span", { role: "gridcell" }, open),
      link ? h("span", { role: "gridcell" }, link) : null,
    );
  }
}

/** "14:05" today, "Tue 14:05" this week, "3 Dec" this year, else "3 Dec 2025". */
export function shortDate(iso, now = new Date()) {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return "";
  const time = t.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  const sameDay = t.toDateString() === now.toDateString();
  if (sameDay) return time;
  const days = (now - t) / 86_400_000;
  if (days >= 0 && days < 6) return `${t.toLocaleDateString(undefined, { weekday: "short" })} ${time}`;
  if (t.getFullYear() === now.getFullYear()) return t.toLocaleDateString(undefined, { day: "numeric", month: "short" });
  return t.toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
}

function fullDate(iso) {
  const t = new Date(iso);
  return Number.isNaN(t.getTime()) ? "" : `Last activity ${t.toLocaleString()}`;
}

function basename(path) {
  if (!path) return "";
  const parts = path.split("/").filter(Boolean);
  return parts.length ? parts[parts.length - 1] : "/";
}
