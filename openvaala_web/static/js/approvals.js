// The approval card: a tool call that waits for the user's answer (docs/protocol.md, approvals).
//
// Everything the model controls (the summary, the arguments, the reason) goes in as text nodes
// through h(), never as HTML. While pending the card offers Allow once, Allow for this
// conversation, and Deny with an optional message for the model; once answered (here or by any
// other client) it is a one-line outcome.
//
// The card is a labelled group that can take focus (tabindex -1) but is not itself a button, so
// a stray Enter while focus lands on it answers nothing. It is excluded from the transcript's
// live region: the app announces only the status change, not the whole card.

import { h } from "./dom.js";
import { diffView } from "./toolbox.js";

export const DECISION_TEXT = {
  allow: "Allowed once",
  allow_conversation: "Allowed for this conversation",
  deny: "Denied",
};

/** "Denied: message", "Allowed once", ...: what an answered approval says in one line. An
 * "allow for this conversation" of what cannot be granted comes back as "allow" with
 * `notGranted` saying why: shown, never a claim that a grant was made. */
export function outcomeText(approval) {
  const base = DECISION_TEXT[approval.decision] || `Answered (${approval.decision})`;
  if (approval.decision === "deny" && approval.message) return `${base}: ${approval.message}`;
  if (approval.notGranted) return `${base}. ${approval.notGranted}`;
  if (approval.decision === "allow_conversation" && approval.grantScope) return `${base}: ${approval.grantScope}`;
  return base;
}

/** "echo hi" for a shell call; the path for a file tool; else the JSON of the arguments. */
function summaryOf(approval) {
  if (typeof approval.summary === "string" && approval.summary) return approval.summary;
  const args = approval.arguments;
  if (args && typeof args === "object") {
    for (const key of ["command", "path"]) if (typeof args[key] === "string") return args[key];
  }
  return JSON.stringify(args ?? {});
}

/** What a file-changing call would change (`diffs`, docs/protocol.md approval/requested), drawn
 * as a tool result's diffs are, before the answers; null when there is nothing to show. */
function proposedDiffs(approval) {
  const diffs = Array.isArray(approval.diffs) ? approval.diffs : [];
  if (!diffs.length) return null;
  const changes = diffs.map((d) => ({ path: d.path, kind: d.kind, diff: d.unified }));
  return h("div", { class: "approval-diffs" }, diffView(changes));
}

/**
 * @param {object} item the local "approval" item from state.js
 * @param {(approval: object, decision: string, message: string|null) => Promise<{taken: boolean, notice: string}>} respond
 *   sends the answer; `taken` false: the card offers its buttons again. `notice`: a short word
 *   shown on the card until the outcome replaces it ("Already answered elsewhere").
 */
export function buildApprovalCard(item, respond) {
  const approval = item.approval;
  const who = approval.agent || "The agent";
  const tool = approval.tool || "a tool";
  const summary = summaryOf(approval);
  if (approval.decision) {
    return h(
      "div",
      {
        class: `approval approval-resolved decision-${approval.decision}`,
        tabindex: "-1",
        "aria-live": "off",
        dataset: { approvalId: approval.approvalId, decision: approval.decision },
      },
      h("span", { class: "approval-outcome" }, outcomeText(approval)),
      h("span", { class: "approval-what" }, h("span", { class: "tool-name" }, tool), " ", h("code", { class: "approval-summary" }, summary)),
      approval.agent ? h("span", { class: "approval-agent" }, `(${approval.agent})`) : null,
    );
  }

  const titleId = `approval-title-${approval.approvalId}`;
  const message = h("input", {
    type: "text",
    class: "approval-message",
    autocomplete: "off",
    placeholder: "Message for the model (optional, sent with Deny)",
    "aria-label": "Message for the model, sent with Deny (optional)",
  });
  const notice = h("span", { class: "approval-notice" });
  const buttons = [];
  const answer = async (decision) => {
    // Disabling the focused button would drop focus to the page: hold it on the card, so the
    // outcome that replaces the card keeps the keyboard user's place.
    if (card.contains(document.activeElement)) card.focus({ preventScroll: true });
    for (const b of buttons) b.disabled = true;
    message.disabled = true;
    notice.textContent = "Sending…";
    const text = decision === "deny" ? message.value.trim() || null : null;
    const { taken, notice: said } = await respond(approval, decision, text);
    // Taken: the approval/resolved notification redraws this card as its outcome.
    notice.textContent = said || "";
    if (!taken) {
      for (const b of buttons) b.disabled = false;
      message.disabled = false;
    }
  };
  const button = (cls, label, decision, title) => {
    const b = h("button", { type: "button", class: `approval-button ${cls}`, title, onclick: () => answer(decision) }, label);
    buttons.push(b);
    return b;
  };
  // The label names exactly what the grant allows (docs/security.md, "Approvals"); when nothing
  // can be remembered for this call, the button is off and says why.
  const grantButton = () => {
    if (typeof approval.grantScope === "string" && approval.grantScope) {
      return button(
        "approval-allow-conversation",
        `Allow for this conversation: ${approval.grantScope}`,
        "allow_conversation",
        "Run it, and run exactly this again without asking in this conversation",
      );
    }
    const why = approval.noGrantReason || "nothing can be remembered for this call";
    return h(
      "button",
      { type: "button", class: "approval-button approval-allow-conversation", disabled: true, title: why },
      `Cannot be allowed for this conversation: ${why}`,
    );
  };
  message.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.isComposing) {
      event.preventDefault();
      answer("deny");
    }
  });
  const card = h(
    "div",
    {
      class: "approval approval-pending",
      role: "group",
      tabindex: "-1",
      "aria-labelledby": titleId,
      "aria-live": "off",
      dataset: { approvalId: approval.approvalId },
    },
    h(
      "div",
      { class: "approval-head", id: titleId },
      h("span", { class: "approval-agent" }, who),
      ` asks to run `,
      h("span", { class: "tool-name" }, tool),
    ),
    h("code", { class: "approval-summary" }, summary),
    approval.reason ? h("p", { class: "approval-reason" }, approval.reason) : null,
    proposedDiffs(approval),
    h(
      "div",
      { class: "approval-actions" },
      button("approval-allow", "Allow once", "allow", "Run this call once"),
      grantButton(),
      message,
      button("approval-deny", "Deny", "deny", "Do not run it; the model gets the message, if any"),
      notice,
    ),
    // After the answers in the tab order: the full arguments are there to check, not in the way.
    h(
      "details",
      { class: "approval-arguments" },
      h("summary", {}, "Arguments"),
      h("pre", {}, JSON.stringify(approval.arguments ?? {}, null, 2)),
    ),
  );
  return card;
}
