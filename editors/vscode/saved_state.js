// What the chat panel may keep in the workspace's state (docs/editors.md, "The chat panel"): the
// page is not trusted (it shows model-written text), and this is written at every change and read
// at every window start, so only fields of the expected types, and bounded, are kept. Pure: no
// `vscode` here, so it is tested alone (tests/lsp/test_vscode_saved_state.py).
"use strict";

const ID = /^[0-9a-f]{32}$/; // docs/protocol.md: ids are 32 lowercase hex
const MAX_SAVED_DRAFTS = 50;
const MAX_SAVED_CHARS = 1024 * 1024;
// The replies a daemon crash cut short, which only the panel has (media/chat.js keepCuts).
const MAX_CUT_CONVERSATIONS = 20;
const MAX_CUT_REPLIES = 20; // of one conversation
const MAX_CUT_CHARS = 512 * 1024; // of all of them
const CUT_TYPES = new Set(["agent_message", "reasoning"]);

const isId = (v) => typeof v === "string" && ID.test(v);

/** Entries of `value` (an object) with a conversation id as key and a value `valid` accepts,
 * the conversation on screen first, kept while `fits(value, count)` says they fit. */
function bounded(value, cid, valid, fits) {
  const entries = value && typeof value === "object" ? Object.entries(value) : [];
  const wanted = entries.filter(([k, v]) => isId(k) && valid(v));
  wanted.sort(([a], [b]) => (b === cid) - (a === cid));
  const kept = {};
  let count = 0;
  for (const [k, v] of wanted) {
    if (!fits(v, count)) continue;
    kept[k] = v;
    count += 1;
  }
  return kept;
}

function cutReply(entry) {
  const e = entry && typeof entry === "object" ? entry : {};
  const item = e.item && typeof e.item === "object" ? e.item : {};
  const ok =
    isId(e.sessionId) &&
    (e.anchor === null || isId(e.anchor)) &&
    isId(item.itemId) &&
    CUT_TYPES.has(item.type) &&
    typeof item.text === "string" &&
    item.text !== "" &&
    (item.turnId === null || item.turnId === undefined || isId(item.turnId));
  if (!ok) return null;
  const kept = { itemId: item.itemId, type: item.type, text: item.text, turnId: item.turnId || null };
  return { sessionId: e.sessionId, anchor: e.anchor, item: kept };
}

/** The panel's {cid, drafts, cut}, as far as it may be kept. Empty drafts (a sent message) are
 * dropped, and past the bounds those of other conversations go first (the webview's own state
 * still has them). A conversation's cut replies are kept whole or not at all. */
function savedState(state) {
  const given = state && typeof state === "object" ? state : {};
  const cid = isId(given.cid) ? given.cid : null;
  let chars = 0;
  const drafts = bounded(given.drafts, cid, (v) => typeof v === "string" && v !== "", (v, count) => {
    if (count >= MAX_SAVED_DRAFTS || chars + v.length > MAX_SAVED_CHARS) return false;
    chars += v.length;
    return true;
  });
  let cutChars = 0;
  const replies = (v) => Array.isArray(v) && v.length > 0 && v.length <= MAX_CUT_REPLIES && v.every(cutReply);
  const checked = bounded(given.cut, cid, replies, (v, count) => {
    const size = v.reduce((n, e) => n + e.item.text.length, 0);
    if (count >= MAX_CUT_CONVERSATIONS || cutChars + size > MAX_CUT_CHARS) return false;
    cutChars += size;
    return true;
  });
  const cut = {};
  for (const [k, v] of Object.entries(checked)) cut[k] = v.map(cutReply);
  return { cid, drafts, cut };
}

module.exports = { savedState, MAX_CUT_CHARS, MAX_SAVED_CHARS, MAX_SAVED_DRAFTS };
