// Context you can see and steer (docs/protocol.md "Context"): the meter opens the trace of the
// next request (its parts and tokens, what was left out, "Copy as JSON" of the provider body);
// messages can be pinned; an opened summary lists the items it replaced and jumps to them; the
// meter's title and label add the threshold and the refresh countdown.

import { $, h } from "./dom.js";

/** The gauge's extra words: compaction off, a prepared summary, replies before a refresh. */
export function gaugeText(usage) {
  if (!usage) return "";
  const bits = [];
  if (usage.autoCompact === false) bits.push("no auto-compact");
  if (usage.earlyCompaction && usage.earlyCompaction.state === "ready") bits.push("summary ready");
  if (Number.isInteger(usage.repliesUntilRefresh)) bits.push(`refresh in ${usage.repliesUntilRefresh}`);
  return bits.join(" · ");
}

export class ContextPanel {
  /** `app`: the App (rpc, openId, state, sessionParam(), viewedSessionId(), transcript). */
  constructor(app) {
    this.app = app;
    this.body = null;
    this.dialog = h(
      "dialog",
      { id: "context-panel", "aria-label": "Context" },
      h("div", { class: "context-head" }, h("h2", {}, "Next request"), h("button", { type: "button", class: "context-close" }, "Close")),
      h("p", { class: "context-gauge" }),
      h("table", { class: "context-parts" }),
      h("ul", { class: "context-omitted" }),
      h("p", { class: "context-note" }),
      h("div", { class: "context-foot" }, h("button", { type: "button", class: "context-copy" }, "Copy as JSON"), h("span", { class: "context-copied" })),
      h("pre", { class: "context-json", hidden: true }),
    );
    document.body.append(this.dialog);
    $(".context-close", this.dialog).addEventListener("click", () => this.dialog.close());
    $(".context-copy", this.dialog).addEventListener("click", () => this.copy());
    const meter = $("#meter");
    meter.setAttribute("role", "button");
    meter.tabIndex = 0;
    meter.addEventListener("click", () => this.open());
    meter.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") this.open();
    });
    // Opening a summary (`toggle` does not bubble: caught on the way down) lists what it replaced.
    $("#transcript").addEventListener("toggle", (e) => this.summaryToggled(e.target), true);
  }

  params() {
    return { conversationId: this.app.openId, ...this.app.sessionParam() };
  }

  async open() {
    if (!this.app.openId) return;
    let result;
    try {
      result = await this.app.rpc.request("conversation/context", { ...this.params(), includeBody: true });
    } catch (err) {
      this.app.showError(`Context: ${err.message || err}`);
      return;
    }
    this.render(result);
    if (!this.dialog.open) this.dialog.showModal();
  }

  render(result) {
    const usage = result.usage || {};
    const extra = gaugeText(usage);
    const threshold = usage.autoCompact === false ? "automatic compaction is off" : `compaction at ${(usage.threshold || 0).toLocaleString()}`;
    // The meter's own figure and words (composer.js), so the two never seem to disagree.
    const used = usage.used || 0;
    const how = usage.source === "reported" ? "reported by the model provider" : "estimated";
    $(".context-gauge", this.dialog).textContent =
      `Meter: ${used.toLocaleString()} of ${(usage.contextWindow || 0).toLocaleString()} tokens used (${how}), ${threshold}` + (extra ? ` · ${extra}` : "");
    // A part of the system prompt carries its text: it opens under its label, exactly as sent.
    const label = (part) =>
      part.text === undefined ? part.label : h("details", {}, h("summary", {}, part.label), h("pre", { class: "part-text" }, part.text));
    const rows = (result.parts || []).map((part) =>
      h("tr", { dataset: { kind: part.kind } }, h("td", { class: "part-label" }, label(part)), h("td", { class: "part-tokens" }, part.tokens.toLocaleString())),
    );
    const total = result.total || 0;
    rows.push(h("tr", { class: "part-total" }, h("td", {}, "Next request (estimated)"), h("td", { class: "part-tokens" }, total.toLocaleString())));
    $(".context-parts", this.dialog).replaceChildren(...rows);
    // The meter counts what the last request held (as the provider reported it, plus an estimate
    // of what came since); this table estimates the next request part by part. Say why they differ.
    $(".context-note", this.dialog).textContent = total === used ? "" :
      `The meter's ${used.toLocaleString()} is the last request as ${usage.source === "reported" ? "the provider counted it, plus what came since" : "estimated"}; ` +
      `the table estimates the next request part by part (${total.toLocaleString()}), tool definitions and instructions included. ` +
      `They differ by ${Math.abs(total - used).toLocaleString()}.`;
    $(".context-omitted", this.dialog).replaceChildren(
      ...(result.omitted || []).map((o) => h("li", {}, `Left out: ${o.itemIds.length} item${o.itemIds.length === 1 ? "" : "s"}, ${o.reason}`)),
    );
    this.body = result.body === undefined ? null : result.body;
    const json = $(".context-json", this.dialog);
    json.textContent = this.body ? JSON.stringify(this.body, null, 2) : "";
    $(".context-copy", this.dialog).disabled = !this.body;
    $(".context-copied", this.dialog).textContent = this.body ? "" : "This model's provider has no request body.";
  }

  async copy() {
    const json = $(".context-json", this.dialog);
    json.hidden = false; // shown too: copying may be refused (no clipboard permission)
    try {
      await navigator.clipboard.writeText(json.textContent);
      $(".context-copied", this.dialog).textContent = "Copied.";
    } catch {
      $(".context-copied", this.dialog).textContent = "Select the JSON below to copy it.";
    }
  }

  // -- pins ------------------------------------------------------------------------------------

  pinned() {
    const session = this.app.state && this.app.state.sessions.get(this.app.viewedSessionId());
    return (session && session.pinned) || [];
  }

  async togglePin(item) {
    const on = !this.pinned().includes(item.itemId);
    await this.app.call(on ? "conversation/pin" : "conversation/unpin", { ...this.params(), itemId: item.itemId }, on ? "Pin" : "Unpin");
  }

  /** Mark the pinned messages and name their buttons (after a snapshot or `pins/updated`). */
  renderPins() {
    const pins = new Set(this.pinned());
    for (const el of document.querySelectorAll("#transcript .item")) {
      const on = pins.has(el.dataset.itemId);
      el.classList.toggle("is-pinned", on);
      const button = el.querySelector(".act-pin");
      if (button) button.textContent = on ? "Unpin" : "Pin";
    }
  }

  // -- summaries -------------------------------------------------------------------------------

  async summaryToggled(details) {
    if (!(details instanceof HTMLDetailsElement) || !details.classList.contains("summary-details") || !details.open) return;
    const itemEl = details.closest(".item");
    if (!itemEl || details.querySelector(".replaced")) return;
    let result;
    try {
      result = await this.app.rpc.request("conversation/replaced", { ...this.params(), summaryItemId: itemEl.dataset.itemId });
    } catch (err) {
      this.app.showError(`Summary: ${err.message || err}`);
      return;
    }
    const items = result.items || [];
    const list = h(
      "div",
      { class: "replaced", dataset: { count: String(items.length) } },
      h("p", {}, `It replaced ${items.length} item${items.length === 1 ? "" : "s"}${result.replacesSummary ? " and the summary before it" : ""}.`),
      h(
        "ul",
        {},
        items.slice(0, 20).map((item) =>
          h("li", { dataset: { itemId: item.itemId } }, `${item.type === "user_message" ? "You" : item.type === "agent_message" ? "Agent" : item.type}: ${(item.text || item.output || item.name || "").slice(0, 100)}`),
        ),
      ),
      result.fromItemId ? h("button", { type: "button", class: "replaced-jump", onclick: () => this.jumpTo(result.fromItemId) }, "Jump to them") : null,
    );
    details.append(list);
  }

  /** Scroll to an item, loading older pages until it is in the transcript. */
  async jumpTo(itemId) {
    for (let page = 0; page < 50; page++) {
      const el = document.querySelector(`#transcript .item[data-item-id="${CSS.escape(itemId)}"]`);
      if (el) {
        el.scrollIntoView({ block: "start" });
        el.classList.add("is-jumped");
        return true;
      }
      const session = this.app.state && this.app.state.sessions.get(this.app.viewedSessionId());
      if (!session || !session.hasMore) break;
      await this.app.loadMore();
    }
    this.app.showError("That part of the history could not be found.", "info");
    return false;
  }
}
