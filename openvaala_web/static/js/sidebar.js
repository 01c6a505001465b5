// The conversation list: newest first, search, the archived toggle, and "New conversation"
// (which asks for the working directory, defaulting to the most recent conversation's).

import { $, h, relativeTime } from "./dom.js";

const SEARCH_DELAY_MS = 250;

export class Sidebar {
  /**
   * @param {HTMLElement} root
   * @param {{list: (opts: object) => Promise<object[]>, create: (cwd: string) => Promise<void>,
   *   open: (id: string) => void}} actions
   */
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
    this.conversations = [];
    this.currentId = null;
    this.recentCwd = "";
    this.listEl = $("#conv-list", root);
    this.search = $("#search", root);
    this.archived = $("#show-archived", root);
    this.form = $("#new-form", root);
    this.cwdInput = $("#new-cwd", root);
    this.formError = $("#new-error", root);
    this.timer = null;
    this.generation = 0;

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
    if (!this.cwdInput.value) this.cwdInput.value = this.recentCwd;
    this.cwdInput.focus();
    this.cwdInput.select();
  }

  closeForm() {
    if (this.form.contains(document.activeElement)) $("#new-conv", this.root).focus();
    this.form.hidden = true;
    this.formError.textContent = "";
  }

  async submitForm() {
    const cwd = this.cwdInput.value.trim();
    if (!cwd) {
      this.formError.textContent = "Enter the working directory (an absolute path).";
      return;
    }
    try {
      await this.actions.create(cwd);
      this.closeForm();
    } catch (err) {
      this.formError.textContent = err.message;
    }
  }

  async refresh() {
    const generation = ++this.generation;
    const search = this.search.value.trim();
    let conversations;
    try {
      conversations = await this.actions.list({ archived: this.archived.checked, search: search || undefined });
    } catch {
      return; // offline: keep what is shown; refreshed again when back online
    }
    if (generation !== this.generation) return; // a newer refresh is on its way
    this.conversations = conversations;
    if (!search && !this.archived.checked && conversations.length) {
      const newest = conversations.reduce((a, b) => ((a.updatedAt || "") >= (b.updatedAt || "") ? a : b));
      this.recentCwd = newest.cwd || this.recentCwd;
    }
    this.render();
  }

  /** A conversation changed (from its subscription): update its row without a round trip. */
  updated(conversation) {
    const index = this.conversations.findIndex((c) => c.conversationId === conversation.conversationId);
    if (index >= 0) {
      this.conversations[index] = { ...this.conversations[index], ...conversation };
      if (Boolean(conversation.archived) !== this.archived.checked) this.conversations.splice(index, 1);
      this.render();
    } else if (conversation.persisted && Boolean(conversation.archived) === this.archived.checked) {
      this.refresh();
    }
    if (conversation.cwd) this.recentCwd = conversation.cwd;
  }

  removed(conversationId) {
    this.conversations = this.conversations.filter((c) => c.conversationId !== conversationId);
    this.render();
  }

  select(conversationId) {
    this.currentId = conversationId;
    this.render();
  }

  render() {
    const sorted = [...this.conversations].sort((a, b) => (b.updatedAt || "").localeCompare(a.updatedAt || ""));
    if (!sorted.length) {
      const empty = this.search.value.trim() ? "No conversation matches." : this.archived.checked ? "No archived conversations." : "No conversations yet.";
      this.listEl.replaceChildren(h("li", { class: "empty" }, empty));
      return;
    }
    this.listEl.replaceChildren(
      ...sorted.map((c) =>
        h(
          "li",
          {
            class: `conv${c.conversationId === this.currentId ? " current" : ""}`,
            dataset: { conversationId: c.conversationId, status: c.status || "idle" },
          },
          h(
            "button",
            { type: "button", class: "conv-open", title: c.cwd || "", onclick: () => this.actions.open(c.conversationId) },
            h("span", { class: `status-dot status-${c.status || "idle"}`, title: c.status || "idle" }),
            h("span", { class: "conv-title" }, c.title || "Untitled"),
            h("span", { class: "conv-meta" }, `${basename(c.cwd)} · ${relativeTime(c.updatedAt)}`),
          ),
        ),
      ),
    );
  }
}

function basename(path) {
  if (!path) return "";
  const parts = path.split("/").filter(Boolean);
  return parts.length ? parts[parts.length - 1] : "/";
}
