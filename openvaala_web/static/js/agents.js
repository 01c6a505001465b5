// The Agents tab: the conversation's sessions as a tree (root agent and its subagents) with
// their status; follow one (the transcript and the composer switch to it) or interrupt it.

import { h } from "./dom.js";
import { sessionTree } from "./state.js";

export class AgentsView {
  /**
   * @param {HTMLElement} root
   * @param {{follow: (sessionId: string) => void, interrupt: (sessionId: string) => void}} actions
   */
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
  }

  render(state, followedId) {
    if (!state) {
      this.root.replaceChildren(h("p", { class: "empty" }, "No conversation open."));
      return;
    }
    const rows = sessionTree(state).map(({ session, depth }) => {
      const info = session.info;
      const isRoot = info.sessionId === state.conversation.rootSessionId;
      const running = Boolean(session.turn) || info.status === "running";
      return h(
        "li",
        {
          class: `agent depth-${Math.min(depth, 6)}${info.sessionId === followedId ? " followed" : ""}`,
          dataset: { sessionId: info.sessionId, status: info.status || "idle" },
        },
        h("span", { class: `status-dot status-${info.status || "idle"}`, title: info.status || "idle" }),
        h("span", { class: "agent-name" }, isRoot ? `${info.agent || "agent"} (main)` : info.agent || "subagent"),
        h("span", { class: "agent-title" }, info.title || ""),
        h("span", { class: "agent-status" }, info.status || "idle"),
        h(
          "span",
          { class: "agent-actions" },
          h("button", { type: "button", class: "agent-follow", onclick: () => this.actions.follow(info.sessionId) },
            info.sessionId === followedId ? "Following" : "Follow"),
          h("button", { type: "button", class: "agent-interrupt", disabled: !running, onclick: () => this.actions.interrupt(info.sessionId) },
            "Interrupt"),
        ),
      );
    });
    this.root.replaceChildren(
      h("p", { class: "hint" }, "Follow an agent to watch its transcript live and message it from the composer."),
      h("ul", { class: "agent-tree" }, rows),
    );
  }
}
