// The composer: the text box, Send (and, while a turn runs, steer / queue / jump), Stop, the
// waiting messages (edit, withdraw, hand to the turn, jump), the context meter and Compact.

import { AttachmentTray, imageMark } from "./attachments.js";
import { gaugeText } from "./context.js";
import { $, compactNumber, h } from "./dom.js";
import { McpPicker } from "./mcp_picker.js";

const MODE_HELP = {
  steer: "Steer: the running turn reads it before its next model call",
  queue: "Queue: starts a new turn when this one ends",
  jump: "Jump: stop the running turn and answer this next",
};

export class Composer {
  /**
   * @param {HTMLElement} root
   * @param {{send: (text: string, mode: string) => Promise<void>, stop: () => Promise<void>,
   *   compact: () => Promise<void>, edit: (id: string, text: string) => Promise<void>,
   *   withdraw: (id: string) => Promise<string>, steer: (id: string) => Promise<void>,
   *   jump: (id: string) => Promise<void>}} actions
   */
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
    this.text = $("#composer-text", root);
    this.sendButton = $("#send", root);
    this.mode = $("#send-mode", root);
    this.stopButton = $("#stop", root);
    this.compactButton = $("#compact", root);
    this.meter = $("#meter", root);
    this.meterFill = $("#meter-fill", root);
    this.meterLabel = $("#meter-label", root);
    this.meterSource = $("#meter-source", root);
    this.inboxEl = $("#inbox", root);
    this.target = $("#composer-target", root);
    this.running = false;
    this.editing = null; // inputId being edited in place
    this.sending = null; // the submit in flight (a promise), if any
    this.attachments = new AttachmentTray(root, this.text, (message) => this.actions.warn?.(message));
    // MCP resources to attach and prompts in the "/" menu (mcp_picker.js).
    this.mcp = new McpPicker(root, this.text, (method, params) => this.actions.request(method, params));

    root.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.text.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.submit();
      }
    });
    this.mode.addEventListener("change", () => {
      this.mode.title = MODE_HELP[this.mode.value];
    });
    this.stopButton.addEventListener("click", () => this.actions.stop());
    this.compactButton.addEventListener("click", () => this.actions.compact());
  }

  setEnabled(enabled) {
    this.text.disabled = !enabled;
    this.sendButton.disabled = !enabled;
    this.attachments.setEnabled(enabled);
    this.mcp.setEnabled(enabled);
    if (!enabled) {
      this.stopButton.hidden = true;
      this.compactButton.disabled = true;
    }
  }

  setText(text) {
    this.text.value = text;
    this.text.focus();
  }

  submit() {
    const text = this.text.value;
    const images = this.attachments.params();
    if (!text.trim() && !images.length) return Promise.resolve();
    // Enter again while the first is still on its way (a slow MCP prompt) sends nothing twice.
    if (this.sending) return this.sending;
    const mode = this.running ? this.mode.value : "queue";
    // Held while in flight: what the turn does may arrive before the daemon's answer (an
    // approval card), and whether the user is still typing is clear only once the box is emptied.
    const done = this._send(text, mode, images).finally(() => {
      if (this.sending === done) this.sending = null;
    });
    this.sending = done;
    return done;
  }

  async _send(text, mode, images) {
    this.sendButton.disabled = true;
    try {
      await this.actions.send(text, mode, images);
      if (images.length) this.attachments.clear();
      if (this.text.value === text) this.text.value = "";
    } catch {
      // Not sent: the app has said why, and the text stays in the box to try again.
    } finally {
      this.sendButton.disabled = this.text.disabled;
    }
  }

  /** Draw from the followed session's state. `busy` is why compaction is refused, or null. */
  render(session, busy, label) {
    // Waiting for an approval is part of a running turn: Stop interrupts it (and denies it).
    const status = session ? session.info.status : "";
    this.running = Boolean(session && (session.turn || status === "running" || status === "awaiting_approval"));
    this.root.dataset.running = String(this.running);
    this.mode.hidden = !this.running;
    this.stopButton.hidden = !this.running;
    this.sendButton.textContent = this.running ? "Send ▸" : "Send";
    this.target.textContent = label || "";
    this.target.hidden = !label;
    this.compactButton.disabled = Boolean(busy) || !session;
    this.compactButton.title = busy ? `Compact context: not now, ${busy}` : "Summarize older history to free context";
    this.renderUsage(session ? session.usage : null);
    this.renderInbox(session ? session.inbox : []);
  }

  renderUsage(usage) {
    if (!usage || !usage.contextWindow) {
      this.meter.hidden = true;
      return;
    }
    this.meter.hidden = false;
    const ratio = usage.used / usage.contextWindow;
    const threshold = usage.threshold || usage.contextWindow;
    let level = "low";
    if (usage.used >= threshold) level = "full";
    else if (usage.used >= threshold * 0.75) level = "high";
    else if (usage.used >= threshold * 0.4) level = "mid";
    this.meter.dataset.level = level;
    this.meter.dataset.source = usage.source;
    // The fill width is set through a class step, not an inline style (CSP: style-src 'self').
    this.meterFill.className = `meter-fill fill-${Math.min(20, Math.round(ratio * 20))}`;
    const approx = usage.source === "estimated" ? "~" : "";
    this.meterLabel.textContent = `${approx}${compactNumber(usage.used)} / ${compactNumber(usage.contextWindow)}`;
    const gauge = gaugeText(usage); // the threshold's companions (context.js)
    this.meterSource.textContent = (usage.source === "reported" ? "reported" : "estimated") + (gauge ? ` · ${gauge}` : "");
    const how =
      usage.source === "reported"
        ? "reported by the model provider (plus an estimate of what was added since)"
        : "estimated (no report from the model provider yet)";
    this.meter.title = `Context: ${usage.used.toLocaleString()} of ${usage.contextWindow.toLocaleString()} tokens, ${how}. Compaction at ${threshold.toLocaleString()}.${gauge ? ` ${gauge}.` : ""} Click for what the next request holds.`;
  }

  renderInbox(inputs) {
    if (this.editing && !inputs.some((i) => i.inputId === this.editing)) this.editing = null;
    if (this.editing) {
      // Keep the edit box the user is typing in; refresh the rest around it.
      const keep = this.inboxEl.querySelector(`[data-input-id="${CSS.escape(this.editing)}"]`);
      if (keep) {
        this.inboxEl.replaceChildren(...inputs.map((i) => (i.inputId === this.editing ? keep : this._row(i))));
        return;
      }
    }
    this.inboxEl.hidden = !inputs.length;
    this.inboxEl.replaceChildren(...inputs.map((i) => this._row(i)));
  }

  _row(input) {
    const mine = input.origin !== "subagent";
    const button = (cls, label, title, fn) =>
      h("button", { type: "button", class: cls, title, onclick: fn }, label);
    return h(
      "li",
      { class: `waiting mode-${input.mode}`, dataset: { inputId: input.inputId, mode: input.mode } },
      h("span", { class: "waiting-mode" }, mine ? input.mode : "subagent"),
      h("span", { class: "waiting-text" }, input.text),
      imageMark(input),
      mine
        ? h(
            "span",
            { class: "waiting-actions" },
            button("w-edit", "Edit", "Change this waiting message", () => this._startEdit(input)),
            button("w-withdraw", "Withdraw", "Take it back into the composer", async () => {
              const text = await this.actions.withdraw(input.inputId);
              if (typeof text === "string") this.setText(this.text.value ? `${this.text.value}\n${text}` : text);
            }),
            input.mode !== "steer"
              ? button("w-steer", "Hand to turn", "Let the running turn read it now (steer)", () => this.actions.steer(input.inputId))
              : null,
            button("w-jump", "Jump", "Stop the running turn and answer this next", () => this.actions.jump(input.inputId)),
          )
        : null,
    );
  }

  _startEdit(input) {
    this.editing = input.inputId;
    const row = this.inboxEl.querySelector(`[data-input-id="${CSS.escape(input.inputId)}"]`);
    if (!row) return;
    const box = h("textarea", { class: "w-edit-text", rows: 2 });
    box.value = input.text;
    const save = async () => {
      const text = box.value;
      this.editing = null;
      if (text.trim() && text !== input.text) await this.actions.edit(input.inputId, text);
      else this.actions.redraw();
    };
    const cancel = () => {
      this.editing = null;
      this.actions.redraw();
    };
    box.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        save();
      } else if (event.key === "Escape") {
        cancel();
      }
    });
    row.replaceChildren(
      h("span", { class: "waiting-mode" }, input.mode),
      box,
      h("span", { class: "waiting-actions" },
        h("button", { type: "button", class: "w-save", onclick: save }, "Save"),
        h("button", { type: "button", class: "w-cancel", onclick: cancel }, "Cancel")),
    );
    box.focus();
  }
}
