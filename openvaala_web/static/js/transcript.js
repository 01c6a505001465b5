// The transcript of one session: one element per item, updated in place by item id.
//
// Agent text and summaries are Markdown (markdown.js: sanitized); everything else — user text,
// tool arguments and tool output, reasoning, errors — goes in as text, never as HTML.

import { h } from "./dom.js";
import { MarkdownStream } from "./markdown.js";

const NEAR_BOTTOM_PX = 80;

export class TranscriptView {
  /**
   * @param {HTMLElement} root scrolling container
   * @param {{onAction: (action: string, item: object) => void, onLoadMore: () => void}} handlers
   */
  constructor(root, handlers) {
    this.root = root;
    this.handlers = handlers;
    this.list = h("div", { class: "items" });
    this.more = h("div", { class: "load-more", hidden: true }, "Loading earlier messages…");
    this.root.replaceChildren(this.more, this.list);
    this.elements = new Map(); // itemId -> {el, item, stream?, output?}
    this.session = null;
    this.observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting) && this.session && this.session.hasMore) {
          this.handlers.onLoadMore();
        }
      },
      { root: this.root, rootMargin: "200px 0px 0px 0px" },
    );
    this.observer.observe(this.more);
  }

  /** Draw a session from scratch (a snapshot, or switching to another session). */
  show(session) {
    this.session = session;
    this.elements.clear();
    this.list.replaceChildren();
    if (session) {
      for (const item of session.items) this.list.append(this._build(item));
    }
    this._updateMore();
    this.root.dataset.sessionId = session ? session.info.sessionId : "";
    this.scrollToBottom();
  }

  clear(message) {
    this.session = null;
    this.elements.clear();
    this.list.replaceChildren(h("p", { class: "empty" }, message || ""));
    this._updateMore();
  }

  scrollToBottom() {
    this.root.scrollTop = this.root.scrollHeight;
  }

  _nearBottom() {
    return this.root.scrollHeight - this.root.scrollTop - this.root.clientHeight < NEAR_BOTTOM_PX;
  }

  _updateMore() {
    this.more.hidden = !(this.session && this.session.hasMore);
  }

  /** Older items were put in front of the session's list: draw them, keeping the view still. */
  prepended(items) {
    const before = this.root.scrollHeight - this.root.scrollTop;
    const first = this.list.firstChild;
    for (const item of items) this.list.insertBefore(this._build(item), first);
    this.root.scrollTop = this.root.scrollHeight - before;
    this._updateMore();
  }

  /** Apply one change from state.apply for this view's session. */
  apply(change) {
    if (!this.session || change.sessionId !== this.session.info.sessionId) return;
    const stick = this._nearBottom();
    const item = change.itemId ? this.session.byId.get(change.itemId) : null;
    switch (change.type) {
      case "itemAdded": {
        const el = this._build(item);
        const index = this.session.items.indexOf(item);
        const next = this.session.items[index + 1];
        const nextEl = next && this.elements.get(next.itemId);
        this.list.insertBefore(el, nextEl ? nextEl.el : null);
        break;
      }
      case "itemUpdated": {
        const entry = this.elements.get(change.itemId);
        if (entry) this._refresh(entry, item);
        else this.list.append(this._build(item));
        break;
      }
      case "itemDelta":
        this._delta(change);
        break;
      case "itemRemoved": {
        const entry = this.elements.get(change.itemId);
        if (entry) entry.el.remove();
        this.elements.delete(change.itemId);
        break;
      }
      default:
        return;
    }
    if (stick) this.scrollToBottom();
  }

  _delta(change) {
    const entry = this.elements.get(change.itemId);
    if (!entry) return;
    if (entry.stream && change.field === "text") {
      entry.stream.append(change.delta);
    } else if (entry.output && change.field === "output") {
      entry.output.append(document.createTextNode(change.delta));
    } else if (entry.textEl && change.field === "text") {
      entry.textEl.append(document.createTextNode(change.delta));
    }
  }

  _refresh(entry, item) {
    // A completed item replaces its streamed form; agent text gets one final full render.
    const fresh = this._build(item);
    const open = entry.el.tagName === "DETAILS" && entry.el.open;
    entry.el.replaceWith(fresh);
    if (open) fresh.open = true;
  }

  _build(item) {
    const entry = { item };
    const el = BUILDERS[item.type] ? BUILDERS[item.type](item, entry, this) : buildUnknown(item);
    el.dataset.itemId = item.itemId;
    el.dataset.type = item.type;
    el.dataset.status = item.status || "";
    el.classList.add("item");
    if (item.status === "interrupted" || item.status === "failed") {
      el.classList.add(`is-${item.status}`);
      el.append(h("span", { class: `badge badge-${item.status}` }, item.status));
    }
    entry.el = el;
    this.elements.set(item.itemId, entry);
    return el;
  }

  _actions(item, actions) {
    return h(
      "div",
      { class: "item-actions" },
      actions.map(([action, label, title]) =>
        h("button", { type: "button", class: `act act-${action}`, title, onclick: () => this.handlers.onAction(action, item) }, label),
      ),
    );
  }
}

const BUILDERS = {
  user_message(item, entry, view) {
    const who = item.origin === "subagent" ? "Subagent report" : "You";
    entry.textEl = h("div", { class: "text" }, item.text || "");
    return h(
      "div",
      { class: `user-message origin-${item.origin || "user"}` },
      h("div", { class: "who" }, who),
      entry.textEl,
      item.origin === "subagent"
        ? null
        : view._actions(item, [
            ["restart", "Restart from here", "Start a new conversation from just before this message, with it in the composer"],
            ["fork", "Fork", "Copy the conversation up to here into a new one"],
          ]),
    );
  },
  agent_message(item, entry, view) {
    const body = h("div", { class: "markdown" });
    entry.stream = new MarkdownStream(body, item.text || "");
    return h(
      "div",
      { class: "agent-message" },
      body,
      item.status === "in_progress" ? null : view._actions(item, [["fork", "Fork", "Copy the conversation up to here into a new one"]]),
    );
  },
  reasoning(item, entry) {
    entry.textEl = h("div", { class: "text" }, item.text || "");
    const label = item.status === "in_progress" ? "Thinking…" : "Reasoning";
    return h("details", { class: "reasoning" }, h("summary", {}, label), entry.textEl);
  },
  tool_call(item) {
    const args = item.arguments && typeof item.arguments === "object" ? item.arguments : null;
    const shown = args && typeof args.command === "string" ? args.command : item.argumentsText || JSON.stringify(item.arguments ?? {});
    return h(
      "div",
      { class: "tool-call" },
      h("span", { class: "tool-name" }, item.name || "tool"),
      h("code", { class: "tool-args" }, shown),
    );
  },
  tool_result(item, entry) {
    entry.output = h("pre", { class: "tool-output" }, item.output || "");
    let status = "running";
    if (item.status === "completed") status = item.isError ? "error" : "done";
    else if (item.status !== "in_progress") status = item.status;
    return h(
      "div",
      { class: `tool-result tool-${status}` },
      h(
        "div",
        { class: "tool-head" },
        h("span", { class: "tool-name" }, item.name || "tool"),
        h("span", { class: "tool-status", dataset: { status } }, status),
        item.truncated ? h("span", { class: "tool-truncated" }, "output truncated") : null,
      ),
      entry.output,
    );
  },
  summary(item) {
    const text = item.text || item.summary || "";
    const body = h("div", { class: "markdown" });
    new MarkdownStream(body, text);
    return h(
      "div",
      { class: "summary-marker" },
      h("div", { class: "marker-line" }, "Context compacted"),
      h("details", {}, h("summary", {}, "Show summary"), body),
    );
  },
  notice(item) {
    const label = item.kind === "interrupted" ? "Interrupted" : item.text || "Notice";
    return h("div", { class: `notice notice-${item.kind || "info"}`, title: item.text || "" }, label);
  },
  turn_failed(item) {
    const err = item.error || {};
    return h("div", { class: "turn-failed" }, `Turn failed: ${err.message || err.kind || "error"}`);
  },
};

function buildUnknown(item) {
  return h("div", { class: "unknown" }, `[${item.type}]`);
}
