// The Agents tab: the conversation's sessions as a tree (root agent and its subagents) with
// their status, live; follow one (the transcript and the composer switch to it), interrupt it,
// or message it (a form under the tree that survives the tree's redraws while you type).

import { h } from "./dom.js";
import { sessionTree } from "./state.js";

export class AgentsView {
  /**
   * @param {HTMLElement} root
   * @param {{follow: (sessionId: string) => void, interrupt: (sessionId: string) => void,
   *   message: (sessionId: string, text: string) => Promise<boolean>}} actions
   */
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
    this.hint = h("p", { class: "hint" }, "Follow an agent to watch its transcript live and message it from the composer.");
    this.tree = h("ul", { class: "agent-tree" });
    this.messaging = null; // sessionId the message form writes to
    this.formLabel = h("label", { for: "agent-message-text" }, "");
    this.formText = h("textarea", { id: "agent-message-text", rows: 2 });
    this.form = h(
      "form",
      { id: "agent-message", hidden: true },
      this.formLabel,
      this.formText,
      h("div", { class: "form-row" },
        h("button", { type: "submit", id: "agent-message-send" }, "Send"),
        h("button", { type: "button", id: "agent-message-cancel", onclick: () => this.closeForm() }, "Cancel")),
    );
    this.form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const text = this.formText.value;
      if (!text.trim() || !this.messaging) return;
      if (await this.actions.message(this.messaging, text)) this.closeForm();
    });
    this.formText.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.form.requestSubmit();
      } else if (event.key === "Escape") {
        this.closeForm();
      }
    });
    this.empty = h("p", { class: "empty" }, "No conversation open.");
    this.root.replaceChildren(this.empty);
  }

  openForm(info) {
    this.messaging = info.sessionId;
    this.formLabel.textContent = `Message to ${info.agent || "agent"}${info.title ? `: ${info.title}` : ""}`;
    this.form.hidden = false;
    this.formText.focus();
  }

  closeForm() {
    this.messaging = null;
    this.formText.value = "";
    this.form.hidden = true;
  }

  render(state, followedId) {
    if (!state) {
      this.closeForm();
      this.root.replaceChildren(this.empty);
      return;
    }
    if (this.tree.parentNode !== this.root) this.root.replaceChildren(this.hint, this.tree, this.form);
    if (this.messaging && !state.sessions.has(this.messaging)) this.closeForm();
    const rows = sessionTree(state).map(({ session, depth }) => {
      const info = session.info;
      const isRoot = info.sessionId === state.conversation.rootSessionId;
      const running = Boolean(session.turn) || info.status === "running" || info.status === "awaiting_approval";
      const status = info.status || "idle";
      return h(
        "li",
        {
          class: `agent depth-${Math.min(depth, 6)}${info.sessionId === followedId ? " followed" : ""}`,
          dataset: { sessionId: info.sessionId, status, depth: String(depth) },
        },
        h("span", { class: `status-dot status-${status}`, title: status }),
        h("span", { class: "agent-name" }, isRoot ? `${info.agent || "agent"} (main)` : info.agent || "subagent"),
        h("span", { class: "agent-title" }, info.title || ""),
        h("span", { class: "agent-status" }, status === "awaiting_approval" ? "awaiting approval" : status),
        h(
          "span",
          { class: "agent-actions" },
          h("button", { type: "button", class: "agent-follow", onclick: () => this.actions.follow(info.sessionId) },
            info.sessionId === followedId ? "Following" : "Follow"),
          h("button", { type: "button", class: "agent-interrupt", disabled: !running, onclick: () => this.actions.interrupt(info.sessionId) },
            "Interrupt"),
          h("button", { type: "button", class: "agent-message", disabled: status === "closed", onclick: () => this.openForm(info) },
            "Message"),
        ),
      );
    });
    this.tree.replaceChildren(...rows);
  }
}
