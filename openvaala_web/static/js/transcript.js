// The transcript of one session: one element per item, updated in place by item id.
//
// Agent text and summaries are Markdown (markdown.js: sanitized); everything else — user text,
// tool arguments and tool output, reasoning, errors — goes in as text, never as HTML.
//
// Long conversations stay smooth: only a window of the session's items has elements (at most
// ELEMENT_BUDGET). It opens on the last PAGE items; scrolling to the top draws earlier ones (from
// memory, or read from the daemon through `onLoadMore`), scrolling to the bottom draws later
// ones, and elements past the budget are dropped at the far end. What the user looks at stays
// put on the screen while elements come and go above it.

import { buildApprovalCard } from "./approvals.js";
import { thumbnails } from "./attachments.js";
import { h } from "./dom.js";
import { MarkdownStream, renderMarkdown } from "./markdown.js";
import { copyText, enhanceCode } from "./reading.js";
import { diffView } from "./toolbox.js";

const NEAR_BOTTOM_PX = 80;
// Of earlier items drawn above the view, how many (nearest it) get their Markdown at once.
const RENDER_NEAR = 30;
export const PAGE = 100;
export const ELEMENT_BUDGET = 300;

export class TranscriptView {
  /**
   * @param {HTMLElement} root scrolling container
   * @param {{onAction: (action: string, item: object) => void, onLoadMore: () => void,
   *   onApprove: (approval: object, decision: string, message: string|null) => Promise<boolean>}} handlers
   */
  constructor(root, handlers) {
    this.root = root;
    this.handlers = handlers;
    this.list = h("div", { class: "items" });
    this.more = h("div", { class: "load-more", hidden: true }, "Loading earlier messages…");
    this.newer = h("div", { class: "load-newer", hidden: true }, "Newer messages below…");
    this.root.replaceChildren(this.more, this.list, this.newer);
    this.elements = new Map(); // itemId -> {el, item, stream?, output?}
    this.session = null;
    this.hiddenBelow = false; // later items exist in memory without elements
    this.observer = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          if (!entry.isIntersecting) continue;
          if (entry.target === this.more) this.older();
          else if (entry.target === this.newer) this.later();
        }
      },
      { root: this.root, rootMargin: "200px 0px 200px 0px" },
    );
    this.observer.observe(this.more);
    // Earlier history drawn while the user scrolls up gets its Markdown rendered only as it comes
    // near the screen: racing to the top (Home, the scrollbar) renders only what is looked at.
    this.pending = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          if (entry.isIntersecting) this._renderPending(entry.target);
        }
      },
      { root: this.root, rootMargin: "800px 0px 800px 0px" },
    );
    this.observer.observe(this.newer);
  }

  /** Draw a session from scratch (a snapshot, or switching to another session): its last page. */
  show(session) {
    this.session = session;
    this.pending.disconnect();
    this.elements.clear();
    this.hiddenBelow = false;
    this.list.replaceChildren();
    if (session) {
      for (const item of session.items.slice(-PAGE)) this.list.append(this._build(item));
    }
    this._updateMore();
    this.root.dataset.sessionId = session ? session.info.sessionId : "";
    this.scrollToBottom();
  }

  /** Draw the session's first page (its whole history is in memory): "Jump to start". Later
   * items are drawn as the user scrolls down, as after scrolling up. */
  showStart() {
    this.showFrom(0);
    this.root.scrollTop = 0;
  }

  /** Draw the session's items from `index` on (with a few before it) and bring that one into
   * view, marked: "Jump to date". */
  showFrom(index) {
    const s = this.session;
    if (!s) return;
    this.pending.disconnect();
    this.elements.clear();
    const start = Math.max(0, index - 5);
    this.list.replaceChildren(...s.items.slice(start, start + PAGE).map((item) => this._build(item)));
    this.hiddenBelow = s.items.length > start + PAGE;
    this._updateMore();
    const entry = index > 0 ? this.elements.get(s.items[index].itemId) : null;
    if (entry) {
      for (const el of this.list.querySelectorAll(".is-jumped")) el.classList.remove("is-jumped");
      entry.el.classList.add("is-jumped");
      entry.el.scrollIntoView({ block: "start" });
    }
  }

  clear(message) {
    this.session = null;
    this.pending.disconnect();
    this.elements.clear();
    this.hiddenBelow = false;
    this.list.replaceChildren(h("p", { class: "empty" }, message || ""));
    this._updateMore();
  }

  scrollToBottom() {
    this.root.scrollTop = this.root.scrollHeight;
  }

  _nearBottom() {
    return this.root.scrollHeight - this.root.scrollTop - this.root.clientHeight < NEAR_BOTTOM_PX;
  }

  /** Index in session.items of the first / last item that has an element (-1: none). */
  _firstShown() {
    const el = this.list.firstElementChild;
    const entry = el && this.elements.get(el.dataset.itemId);
    return entry ? this.session.items.indexOf(entry.item) : -1;
  }

  _lastShown() {
    const el = this.list.lastElementChild;
    const entry = el && this.elements.get(el.dataset.itemId);
    return entry ? this.session.items.indexOf(entry.item) : -1;
  }

  _updateMore() {
    const s = this.session;
    this.more.hidden = !(s && (s.hasMore || this._firstShown() > 0));
    this.newer.hidden = !(s && this.hiddenBelow);
    this.root.dataset.elements = String(this.elements.size);
  }

  /** Keep `anchor` (an element that stays) where it is on screen while `change` runs. */
  _keepInPlace(anchor, change) {
    if (!anchor) {
      change();
      return;
    }
    const top = anchor.getBoundingClientRect().top;
    change();
    this.root.scrollTop += anchor.getBoundingClientRect().top - top;
  }

  /** Scrolled to the top: draw earlier items, from memory or (none left there) the daemon. */
  older() {
    const s = this.session;
    if (!s) return;
    const first = this._firstShown();
    if (first > 0) {
      this._drawOlder(s.items.slice(Math.max(0, first - PAGE), first));
    } else if (s.hasMore) {
      this.handlers.onLoadMore();
    }
  }

  /** Scrolled to the bottom of a window that does not reach the end: draw later items. */
  later() {
    const s = this.session;
    if (!s || !this.hiddenBelow) return;
    const last = this._lastShown();
    const next = s.items.slice(last + 1, last + 1 + PAGE);
    for (const item of next) this.list.append(this._build(item));
    this.hiddenBelow = last + 1 + next.length < s.items.length;
    this._prune("top");
    this._updateMore();
    this._again(this.newer);
  }

  /** Older items were put in front of the session's list (read from the daemon): draw them. */
  prepended(items) {
    if (!this.session) return;
    const first = this._firstShown();
    const start = items.length ? this.session.items.indexOf(items[0]) : -1;
    if (start >= 0 && (first < 0 || start < first)) {
      // A read brings up to HISTORY_PAGE items: only the page next to the view is drawn now, the
      // rest from memory as the user goes on up.
      const end = first < 0 ? this.session.items.length : first;
      this._drawOlder(this.session.items.slice(Math.max(start, end - PAGE), end));
      // Nothing was shown (a subagent's first page, read when it was opened): its end, as `show`.
      if (first < 0) this.scrollToBottom();
    } else {
      this._updateMore();
    }
  }

  _drawOlder(items) {
    const anchor = this.list.firstElementChild;
    this._keepInPlace(anchor, () => {
      const fragment = document.createDocumentFragment();
      // The items next to the view get their Markdown now, inside the position keeping: rendered
      // later, their new heights would push what the user looks at.
      items.forEach((item, i) => {
        fragment.append(this._build(item, { lazy: i < items.length - RENDER_NEAR }));
      });
      this.list.insertBefore(fragment, anchor);
      this._prune("bottom");
      this._updateMore();
    });
    this._again(this.more);
  }

  /** A sentinel still in view after drawing (a short page): go on once the layout settles. */
  _again(sentinel) {
    requestAnimationFrame(() => {
      if (sentinel.hidden || !this.session) return;
      const box = this.root.getBoundingClientRect();
      const at = sentinel.getBoundingClientRect();
      if (at.bottom >= box.top - 200 && at.top <= box.bottom + 200) {
        if (sentinel === this.more) this.older();
        else this.later();
      }
    });
  }

  /** Drop elements past the budget at one end ("top": the oldest; "bottom": the newest). */
  _prune(end) {
    let extra = this.list.childElementCount - ELEMENT_BUDGET;
    if (extra <= 0) return;
    const doomed = [];
    let el = end === "top" ? this.list.firstElementChild : this.list.lastElementChild;
    while (extra > 0 && el) {
      doomed.push(el);
      el = end === "top" ? el.nextElementSibling : el.previousElementSibling;
      extra -= 1;
    }
    const stay = el;
    const drop = () => {
      for (const gone of doomed) {
        this.elements.delete(gone.dataset.itemId);
        // Not watched any more once gone: the observer would go on checking every one.
        for (const body of gone.querySelectorAll(".md-pending")) this.pending.unobserve(body);
        gone.remove();
      }
    };
    if (end === "top") this._keepInPlace(stay, drop);
    else {
      drop();
      this.hiddenBelow = true;
    }
  }

  /** Apply one change from state.apply for this view's session. */
  apply(change) {
    if (!this.session || change.sessionId !== this.session.info.sessionId) return;
    const stick = this._nearBottom() && !this.hiddenBelow;
    const item = change.itemId ? this.session.byId.get(change.itemId) : null;
    switch (change.type) {
      case "itemAdded":
      case "itemUpdated": {
        const entry = this.elements.get(change.itemId);
        if (entry) {
          this._refresh(entry, item);
          break;
        }
        // A new item gets an element when it falls inside the drawn window (or at its end,
        // when that is the end of the session).
        const index = this.session.items.indexOf(item);
        const first = this._firstShown();
        const last = this._lastShown();
        if (index < 0 || (first >= 0 && index < first)) break;
        if (first >= 0 && index > last && this.hiddenBelow) break;
        if (!stick && index > last && this.list.childElementCount >= ELEMENT_BUDGET) {
          // The user reads further up and the window is full: it waits below, drawn on scroll.
          this.hiddenBelow = true;
          break;
        }
        const next = this.session.items[index + 1];
        const nextEl = next && this.elements.get(next.itemId);
        this.list.insertBefore(this._build(item), nextEl ? nextEl.el : null);
        if (stick) this._prune("top");
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
    this._updateMore();
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
    const open = entry.el.tagName === "DETAILS" && entry.el.open && entry.el.dataset.auto !== "1";
    // Focus inside the old form (an approval card just answered) stays on the new one, so a
    // keyboard user keeps their place in the transcript.
    const focused = entry.el.contains(document.activeElement);
    entry.el.replaceWith(fresh);
    if (open) fresh.open = true;
    if (focused && fresh.hasAttribute("tabindex")) fresh.focus({ preventScroll: true });
  }

  /** A completed agent reply drawn from history: its text now, its Markdown once near the screen. */
  deferMarkdown(body, text) {
    body.classList.add("md-pending");
    body.textContent = text;
    body.dataset.pending = "1";
    this.pending.observe(body);
  }

  _renderPending(body) {
    this.pending.unobserve(body);
    if (body.dataset.pending !== "1") return;
    delete body.dataset.pending;
    body.classList.remove("md-pending");
    const text = body.textContent;
    body.replaceChildren(renderMarkdown(text));
    enhanceCode(body);
  }

  /** Move focus to an item's element (an approval card that just appeared). */
  focusItem(itemId) {
    const entry = this.elements.get(itemId);
    if (!entry) return false;
    entry.el.focus({ preventScroll: true });
    entry.el.scrollIntoView({ block: "nearest" });
    return true;
  }

  _build(item, { lazy = false } = {}) {
    const entry = { item, lazy };
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

  /** Is the session shown the main agent's (not a subagent's)? */
  isRoot() {
    return !(this.session && this.session.info.parentSessionId);
  }

  _actions(item, actions) {
    return h(
      "div",
      { class: "item-actions" },
      actions.map(([action, label, title]) => {
        const button = h("button", { type: "button", class: `act act-${action}`, title }, label);
        // Copy is the view's own; the rest are the app's.
        const run = action === "copy" ? () => copyText(item.text || "", button) : () => this.handlers.onAction(action, item);
        button.addEventListener("click", run);
        return button;
      }),
    );
  }
}

const COPY = ["copy", "Copy", "Copy this message's text"];
const COLLAPSE_CHARS = 1200;
const COLLAPSE_LINES = 14;

/** A long message shows its start and a "Show more" button (the whole text stays in the page). */
function collapsible(textEl, text) {
  const lines = (text.match(/\n/g) || []).length + 1;
  if (text.length <= COLLAPSE_CHARS && lines <= COLLAPSE_LINES) return null;
  textEl.classList.add("collapsed");
  textEl.id = `msg-${Math.random().toString(36).slice(2, 10)}`;
  const toggle = h("button", { type: "button", class: "show-more", "aria-expanded": "false", "aria-controls": textEl.id }, "Show more");
  toggle.addEventListener("click", () => {
    const collapsed = textEl.classList.toggle("collapsed");
    toggle.textContent = collapsed ? "Show more" : "Show less";
    toggle.setAttribute("aria-expanded", String(!collapsed));
  });
  return toggle;
}

// Pinned messages are never summarized away (docs/protocol.md "Context"; context.js names it).
const PIN_ACTION = ["pin", "Pin", "Keep this message verbatim when the context is compacted"];

const BUILDERS = {
  user_message(item, entry, view) {
    let who = "You";
    if (item.origin === "subagent") who = "Subagent report";
    else if (item.fromSessionId) who = "From the parent agent";
    let body;
    if (item.origin === "subagent") {
      // A subagent's report is the subagent model's Markdown: rendered, like any agent reply.
      body = h("div", { class: "markdown text-markdown" });
      new MarkdownStream(body, item.text || "").finish();
    } else {
      entry.textEl = h("div", { class: "text" }, item.text || "");
      body = entry.textEl;
    }
    const more = collapsible(body, item.text || "");
    // Restart and Fork work on the main agent's history, from the user's own messages.
    const mine = item.origin !== "subagent" && !item.fromSessionId && view.isRoot();
    return h(
      "div",
      { class: `user-message origin-${item.origin || "user"}${item.fromSessionId ? " from-parent" : ""}` },
      h("div", { class: "who" }, who),
      body,
      more,
      thumbnails(item),
      view._actions(item, [
        COPY,
        ...(mine
          ? [
              ["restart", "Restart from here", "Start a new conversation from just before this message, with it in the composer"],
              ["fork", "Fork", "Copy the conversation up to here into a new one"],
              PIN_ACTION,
            ]
          : []),
      ]),
    );
  },
  agent_message(item, entry, view) {
    const body = h("div", { class: "markdown" });
    if (item.status === "in_progress") {
      entry.stream = new MarkdownStream(body, item.text || "");
    } else if (entry.lazy) {
      view.deferMarkdown(body, item.text || "");
    } else {
      // Complete (history, or its final form): one render and one sanitizing pass for all of it.
      body.append(renderMarkdown(item.text || ""));
      enhanceCode(body);
    }
    let actions = null;
    if (item.status !== "in_progress") {
      actions = view._actions(item, view.isRoot() ? [COPY, ["fork", "Fork", "Copy the conversation up to here into a new one"], PIN_ACTION] : [COPY]);
    }
    return h("div", { class: "agent-message" }, body, actions);
  },
  reasoning(item, entry) {
    entry.textEl = h("div", { class: "text" }, item.text || "");
    const streaming = item.status === "in_progress";
    // Open while it streams, so the thinking can be read as it comes; folded once done (unless
    // the user opened or closed it by hand, which _refresh keeps).
    const summary = h("summary", {}, streaming ? "Thinking…" : "Reasoning");
    const el = h("details", { class: "reasoning", open: streaming, dataset: { auto: "1" } }, summary, entry.textEl);
    summary.addEventListener("click", () => {
      el.dataset.auto = "0";
    });
    return el;
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
    // A scroller: focusable, so the keyboard can scroll it too.
    entry.output = h("pre", { class: "tool-output", tabindex: "0" }, item.output || "");
    // A call that changed files shows their diffs (its text output says the same, for the model).
    const body = Array.isArray(item.changes) && item.changes.length ? diffView(item.changes) : entry.output;
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
      body,
      thumbnails(item),
    );
  },
  summary(item) {
    // The compaction marker: everything above it reaches the model only as this summary.
    const body = h("div", { class: "markdown summary-text" });
    new MarkdownStream(body, item.text || "").finish();
    const how = item.reason === "manual" ? "by hand" : "automatically";
    const count = Number.isInteger(item.coveredItems) && item.coveredItems > 0 ? `, ${item.coveredItems} items` : "";
    return h(
      "div",
      { class: "summary-marker", dataset: { reason: item.reason || "auto" } },
      h("div", { class: "marker-line" }, "Context compacted", h("span", { class: "marker-reason" }, `(${how}${count})`)),
      h("details", { class: "summary-details" }, h("summary", {}, "Show summary"), body),
    );
  },
  notice(item, entry, view) {
    const label = item.kind === "interrupted" ? "Interrupted" : item.text || "Notice";
    const failed = item.kind === "turn_failed" ? " turn-failed" : "";
    const el = h("div", { class: `notice notice-${item.kind || "info"}${failed}`, title: item.text || "" }, label);
    if (item.kind === "server_stopped") {
      // Shown only while this is the cut turn's last word (the app's markCutTurn).
      el.append(" ", h("button", { type: "button", class: "continue-cut", hidden: true,
        onclick: () => view.handlers.onAction("continue", item) }, "Continue"));
    }
    return el;
  },
  approval(item, entry, view) {
    return buildApprovalCard(item, (approval, decision, message) => view.handlers.onApprove(approval, decision, message));
  },
  turn_failed(item) {
    const err = item.error || {};
    return h("div", { class: "turn-failed" }, `Turn failed: ${err.message || err.kind || "error"}`);
  },
};

function buildUnknown(item) {
  return h("div", { class: "unknown" }, `[${item.type}]`);
}
