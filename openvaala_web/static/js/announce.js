// What a screen reader hears during a turn (the polite live region #announce): that a reply is
// finished, was interrupted or failed, and that a subagent reported back — never the tokens
// themselves. `spoken` is pure: it turns one of state.apply's changes into words, or null.

import { $ } from "./dom.js";

const REPORT_CHARS = 140;

/**
 * @param {object} change one of S.apply's changes
 * @param {object} state the conversation (S.fromSnapshot)
 * @param {string} viewed the session shown in the transcript
 * @returns {string|null}
 */
export function spoken(change, state, viewed) {
  if (change.sessionId !== viewed) return null;
  if (change.type === "turn" && change.ended) {
    if (change.ended === "completed") return "The reply is complete.";
    if (change.ended === "interrupted") return "The reply was interrupted.";
    if (change.ended === "failed") {
      const message = change.error && change.error.message;
      return message ? `The turn failed: ${message}` : "The turn failed.";
    }
    return null;
  }
  if (change.type === "itemAdded") {
    const session = state.sessions.get(change.sessionId);
    const item = session && session.byId.get(change.itemId);
    if (item && item.type === "user_message" && item.origin === "subagent") {
      const text = String(item.text || "").trim();
      const short = text.length > REPORT_CHARS ? `${text.slice(0, REPORT_CHARS)}…` : text;
      return `A subagent reported: ${short}`;
    }
  }
  return null;
}

// The last few announcements stay in the region, each in its own element: two said in quick
// succession (an approval answered, then the reply it ends) are both added, not the second
// written over the first before a screen reader read it.
const KEPT = 3;

/** Say `text` in the polite live region (a new element each time, so the same words twice are
 * said twice). */
export function announce(text) {
  const el = $("#announce");
  const line = document.createElement("div");
  line.textContent = text;
  el.append(line);
  while (el.childElementCount > KEPT) el.firstElementChild.remove();
}
