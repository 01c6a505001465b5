// The chat panel's webview (docs/editors.md, "The chat panel"). It folds the conversation with
// the web UI's own modules, copied in at package time (scripts/copy-web.js): state.js for the
// fold, markdown.js for safe rendered Markdown with highlighted, copyable code. A subscription
// draws the transcript once; every later event changes only the items it names (a streamed
// reply appends to its one growing block), so nothing is redrawn whole per change.
//
// It talks to the extension (chat_view.js) by messages: {type:"request"} goes to the bridge,
// {type:"host"} asks VS Code (the diff editor, a file picker, the editor's selection).
import { apply, firstServerItemId, fromSnapshot, prependItems, session, sessionTree } from "./web/js/state.js";
import { MarkdownStream, renderMarkdown } from "./web/js/markdown.js";
import { PermissionModeSelect } from "./web/js/permission_mode.js";
import { mcpPicker } from "./mcp.js";

const api = acquireVsCodeApi();
const ui = {
  cid: null, // the conversation on screen
  sessionId: null, // the agent followed (null: the root)
  state: null, // the fold (state.js), once the snapshot is in
  early: [], // events that came before the snapshot
  drafts: {}, // cid -> composer text, kept across switches and reloads
  cut: {}, // cid -> the replies a daemon crash cut short, which only this panel has (keptCuts)
  nodes: new Map(), // itemId -> {el, stream?}
};
// What tests and the bench read: how often the whole transcript was drawn.
const stats = { fullRenders: 0, events: 0 };
window.openvaalaPanel = { ui, stats };

const $ = (id) => document.getElementById(id);
const calls = new Map();
let nextId = 1;

function post(type, body) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    calls.set(id, { resolve, reject });
    api.postMessage({ type, id, ...body });
  });
}
const call = (method, params) => post("request", { method, params });
const host = (action, args) => post("host", { action, args });

// VS Code writes a webview view's state to disk only on its periodic save (about once a minute),
// so a window reloaded sooner gets none back: the extension keeps a copy in the workspace's
// state, which it writes at once (docs/editors.md, "The chat panel").
function save() {
  const state = { cid: ui.cid, drafts: ui.drafts, cut: ui.cut };
  api.setState(state);
  api.postMessage({ type: "state", state });
}

async function restore() {
  // The extension's copy first: it is written at every change, while VS Code's own copy of the
  // webview's state may be from its last periodic save, a conversation or a draft behind.
  const saved = (await guarded("restore", () => host("restore", {}))) || api.getState() || {};
  ui.drafts = { ...(saved.drafts || {}), ...ui.drafts };
  ui.cut = { ...(saved.cut || {}), ...ui.cut };
  // The extension may have opened a conversation meanwhile (a palette command): that one stays.
  if (ui.cid) return;
  if (saved.cid) await open(saved.cid);
  else await refreshPicker();
}

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "on") for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    else if (k === "class") el.className = v;
    else if (v !== undefined && v !== null && v !== false) el.setAttribute(k, v === true ? "" : v);
  }
  el.append(...children.filter((c) => c !== null && c !== undefined));
  return el;
}

function button(label, onClick, title) {
  return h("button", { title, on: { click: onClick } }, label);
}

async function guarded(what, fn) {
  try {
    return await fn();
  } catch (err) {
    showStatus(`${what}: ${err.message || err}`, true);
    return undefined;
  }
}

function showStatus(text, error = false) {
  const el = $("status");
  el.textContent = text;
  el.classList.toggle("error", error);
}

// -- opening a conversation ------------------------------------------------------------

async function open(cid, composerText) {
  if (ui.cid && ui.cid !== cid) ui.drafts[ui.cid] = $("text").value;
  ui.cid = cid;
  ui.sessionId = null;
  ui.state = null;
  ui.early = [];
  $("text").value = composerText !== undefined ? composerText : ui.drafts[cid] || "";
  drawImages();
  save();
  tellShown(); // its approvals are asked here
  await resubscribe();
  refreshPicker();
}

// A conversation deleted elsewhere (or the one a reload restored, deleted meanwhile): the panel
// goes back to the picker and drops its draft, instead of showing and keeping one that is gone.
function forget(cid) {
  delete ui.drafts[cid];
  delete ui.cut[cid];
  delete images[cid];
  ui.cid = null;
  ui.state = null;
  ui.early = [];
  $("text").value = "";
  $("transcript").replaceChildren();
  drawImages();
  save();
  tellShown();
}

// Which conversation, and which of its agents, the panel shows: the extension then leaves the
// approvals shown here to the panel and asks about the others itself.
function tellShown() {
  api.postMessage({ type: "shown", conversationId: ui.cid, sessionId: ui.sessionId });
}

async function resubscribe() {
  const cid = ui.cid;
  let r;
  try {
    r = await call("openvaala/subscribe", { conversationId: cid });
  } catch (err) {
    if (ui.cid === cid && err.data && err.data.kind === "not_found") return forget(cid);
    return showStatus(`subscribe: ${err.message || err}`, true);
  }
  if (ui.cid !== cid) return;
  // The state it replaces keeps a reply a daemon crash cut short (state.js keepCutStream); with
  // none (the conversation opened again, the window reloaded), those this panel kept do.
  ui.state = fromSnapshot(r.snapshot, r.seq, ui.state || keptBefore(cid));
  const early = ui.early;
  ui.early = [];
  for (const note of early) apply(ui.state, note);
  keepCuts();
  renderAll();
}

// -- replies a daemon crash cut short --------------------------------------------------------
// No daemon saved them (openvaala_server/client/cut_stream.py): only this panel has them, so it
// keeps them per conversation, each with the item it followed, and saves them like the drafts
// (docs/editors.md, "The chat panel").

function keepCuts() {
  const kept = [];
  for (const s of ui.state.sessions.values()) {
    s.items.forEach((item, at) => {
      if (!item.keptCut) return;
      const anchor = at > 0 ? s.items[at - 1].itemId : null;
      const { itemId, type, text, turnId } = item;
      kept.push({ sessionId: s.info.sessionId, anchor, item: { itemId, type, text, turnId } });
    });
  }
  const had = ui.cut[ui.cid];
  if (!kept.length && !had) return;
  if (kept.length) ui.cut[ui.cid] = kept;
  else delete ui.cut[ui.cid];
  save();
}

/** What the fold needs to put the kept replies back where they were (state.js keepCutStream):
 * per session, each reply after the item it followed. */
function keptBefore(cid) {
  const kept = ui.cut[cid];
  if (!kept || !kept.length) return null;
  const sessions = new Map();
  for (const { sessionId, anchor, item } of kept) {
    if (!sessions.has(sessionId)) sessions.set(sessionId, { turn: null, items: [] });
    const items = sessions.get(sessionId).items;
    if (anchor) items.push({ itemId: anchor });
    items.push({ ...item, sessionId, status: "interrupted", keptCut: true });
  }
  return { sessions };
}

// -- events ------------------------------------------------------------------------------

function onEvent(event) {
  if (event.conversationId !== ui.cid) return;
  stats.events += 1;
  const note = { method: event.method, params: event.params || {} };
  if (!ui.state) return ui.early.push(note);
  if (event.method === "conversation/snapshot" && note.params.snapshot) {
    // A redraw from scratch (the bridge resubscribed to a restarted daemon), keeping what a
    // crash cut short, marked interrupted.
    ui.state = fromSnapshot(note.params.snapshot, event.seq, ui.state);
    keepCuts();
    return renderAll();
  }
  const { status, changes } = apply(ui.state, note);
  if (status === "gap") return resubscribe();
  for (const change of changes) onChange(change);
}

function shownSession() {
  return ui.state && session(ui.state, ui.sessionId);
}

function onChange(change) {
  const s = shownSession();
  const mine = !change.sessionId || (s && change.sessionId === s.info.sessionId);
  switch (change.type) {
    case "itemAdded":
    case "itemUpdated":
      if (mine) drawItem(s.byId.get(change.itemId));
      break;
    case "itemDelta":
      if (mine) deltaItem(s.byId.get(change.itemId), change);
      break;
    case "itemRemoved":
      if (mine) removeItem(change.itemId);
      break;
    case "plan":
      if (mine) renderPlan();
      break;
    case "inbox":
      if (mine) renderInbox();
      break;
    case "session":
    case "sessionAdded":
      renderAgents();
      renderHeader();
      showChoices();
      break;
    default:
      renderHeader();
  }
}

window.addEventListener("message", (e) => {
  const m = e.data || {};
  if (m.type === "response") {
    const pending = calls.get(m.id);
    calls.delete(m.id);
    if (!pending) return;
    if (m.error) pending.reject(Object.assign(new Error(m.error.message), { data: m.error.data }));
    else pending.resolve(m.result);
  } else if (m.type === "notification") {
    if (m.method === "$/openvaala/event") onEvent(m.params);
    else if (m.method === "$/openvaala/connection") onConnection(m.params);
    else if (m.method === "$/openvaala/mcpStatus") mcp.changed(m.params);
  } else if (m.type === "open" && m.conversationId) {
    open(m.conversationId, m.composerText);
  }
});

function onConnection(p) {
  if (p.state === "reconnecting") showStatus("connection to the daemon lost, reconnecting…", true);
  // No resubscription here: the bridge has resubscribed before it says so, and sent what was
  // missed or a snapshot (onEvent); another snapshot would lose the reply a crash cut short.
  else if (p.state === "connected") {
    // What the daemon reports now (a turn that went on over there shows as running), as the
    // fold has it after the bridge's replay or snapshot.
    if (ui.state) renderHeader(" · reconnected");
    else showStatus("reconnected");
    mcp.forget(); // maybe a new daemon: its servers are read again at the next need
  } else if (p.state === "disconnected") showStatus(`the daemon is gone: ${p.message || ""}`, true);
}

// -- the transcript ---------------------------------------------------------------------

function renderAll() {
  stats.fullRenders += 1;
  ui.nodes.clear();
  $("transcript").replaceChildren();
  const s = shownSession();
  for (const item of (s && s.items) || []) drawItem(item);
  renderHeader();
  renderAgents();
  renderPlan();
  renderInbox();
  showChoices();
  pageIn();
}

// A subagent at rest comes with none of its items in a snapshot (docs/protocol.md, "Snapshot"):
// its last page is read when it is shown, and the transcript drawn again with it.
async function pageIn() {
  const state = ui.state;
  const s = shownSession();
  if (!s || !s.hasMore || s.pagingIn || firstServerItemId(state, s.info.sessionId)) return;
  s.pagingIn = true;
  let r;
  try {
    r = await call("openvaala/read", { conversationId: ui.cid, sessionId: s.info.sessionId });
  } catch (err) {
    return showStatus(`read: ${err.message || err}`, true);
  } finally {
    s.pagingIn = false;
  }
  if (ui.state !== state) return;
  prependItems(state, s.info.sessionId, r.items || [], Boolean(r.hasMore));
  if (shownSession() === s) renderAll();
}

function drawItem(item) {
  if (!item) return;
  const old = ui.nodes.get(item.itemId);
  if (item.type === "tool_result") return drawResult(item);
  if (old && old.stream && item.type === "agent_message") {
    // The completed message: its final text, rendered whole once.
    if (old.stream.text !== item.text) old.stream.setText(item.text || "");
    if (item.status !== "in_progress") old.stream.finish();
    return;
  }
  const node = itemNode(item);
  if (old) old.el.replaceWith(node.el);
  else $("transcript").append(node.el);
  ui.nodes.set(item.itemId, node);
  if (item.type === "tool_call") {
    // A result that came first (a snapshot's order) finds its call now.
    const s = shownSession();
    const result = s && s.items.find((i) => i.type === "tool_result" && i.callId === item.callId);
    if (result) drawResult(result);
  }
}

function deltaItem(item, change) {
  const node = item && ui.nodes.get(item.itemId);
  if (!node) return drawItem(item);
  if (node.stream && change.field === "text") node.stream.append(change.delta);
  else if (node.body) node.body.textContent += change.delta;
  else drawItem(item);
}

function removeItem(itemId) {
  const node = ui.nodes.get(itemId);
  if (node) node.el.remove();
  ui.nodes.delete(itemId);
}

function itemNode(item) {
  switch (item.type) {
    case "user_message":
      return userNode(item);
    case "agent_message": {
      const body = h("div", { class: "md" });
      const stream = new MarkdownStream(body, item.text || "");
      if (item.status !== "in_progress") stream.finish();
      const copy = button("Copy", () => navigator.clipboard.writeText(stream.text), "Copy the message");
      const cut = item.status === "interrupted" ? h("span", { class: "cut" }, "interrupted") : null;
      const who = h("div", { class: "who" }, "Assistant", cut, copy);
      return { el: h("article", { class: `msg agent ${item.status || ""}` }, who, body), stream };
    }
    case "reasoning": {
      const body = h("div", { class: "reasoning-text" }, item.text || "");
      return { el: h("details", { class: "reasoning" }, h("summary", {}, "Thinking"), body), body };
    }
    case "tool_call": {
      const output = h("pre", { class: "output" });
      const el = h(
        "details",
        { class: "tool", "data-call": item.callId },
        h("summary", {}, h("code", {}, item.name), " ", argSummary(item)),
        h("pre", { class: "args" }, item.argumentsText || JSON.stringify(item.arguments || {}, null, 2)),
        output
      );
      return { el, output };
    }
    case "approval":
      return { el: approvalNode(item.approval) };
    case "summary":
      return { el: h("details", { class: "summary" }, h("summary", {}, "Summary of earlier messages"), rendered(item.text)) };
    default:
      return { el: h("div", { class: `notice ${item.kind || item.type}` }, item.text || item.type) };
  }
}

function rendered(text) {
  return h("div", { class: "md" }, renderMarkdown(text || ""));
}

function argSummary(item) {
  const a = item.arguments || {};
  const first = a.command || a.path || a.query || a.pattern || a.agent || "";
  return h("span", { class: "arg" }, String(Array.isArray(first) ? first.join(" ") : first).slice(0, 120));
}

function drawResult(item) {
  const call = document.querySelector(`details.tool[data-call="${CSS.escape(item.callId)}"]`);
  const node = call && [...ui.nodes.values()].find((n) => n.el === call);
  if (!node) {
    const el = h("pre", { class: "output orphan" }, item.output || "");
    const old = ui.nodes.get(item.itemId);
    if (old) old.el.replaceWith(el);
    else $("transcript").append(el);
    ui.nodes.set(item.itemId, { el, body: el });
    return;
  }
  node.output.textContent = item.output || "";
  call.classList.toggle("failed", Boolean(item.isError));
  ui.nodes.set(item.itemId, { el: h("span"), body: node.output });
}

function userNode(item) {
  const cid = ui.cid;
  // A subagent's report to its parent, or what a parent told its subagent (`fromSessionId`,
  // docs/protocol.md's user_message): neither is yours to fork or rewind.
  const yours = item.origin !== "subagent" && !item.fromSessionId;
  const actions =
    !yours || ui.sessionId
      ? null
      : h(
          "span",
          { class: "actions" },
          button("Fork here", () => fork(item.itemId), "A new conversation up to this message"),
          button("Rewind", () => rewind(cid, item.itemId), "A new conversation from before this message, the message back in the composer")
        );
  const who = item.origin === "subagent" ? "Subagent report" : item.fromSessionId ? "From the parent agent" : "You";
  return { el: h("article", { class: "msg user" }, h("div", { class: "who" }, who, actions), h("div", { class: "text" }, item.text || "")) };
}

// -- approvals ---------------------------------------------------------------------------

function approvalNode(a) {
  const el = h("section", { class: "approval", "data-approval": a.approvalId });
  el.append(h("div", { class: "ask" }, a.text || `${a.agent} wants to use ${a.tool}: ${a.summary || ""}`));
  if (a.reason) el.append(h("div", { class: "reason" }, a.reason));
  for (const diff of a.diffs || []) {
    const open = button(`Open diff: ${diff.path}`, () => host("diff", { diff, approvalId: a.approvalId }));
    el.append(h("div", { class: "diff" }, open, h("pre", { class: "unified" }, diff.unified || ""), diff.truncated ? "(diff truncated)" : null));
  }
  if (a.decision) {
    el.append(h("div", { class: "outcome" }, outcome(a)));
    return el;
  }
  const row = h("div", { class: "row" }, button("Accept", () => respond(a, "allow"), "Run it once"));
  // The grant's label names exactly what it allows (docs/security.md, "Approvals"); the daemon's
  // request says so in `grantScope`, or why nothing can be remembered for this call.
  if (typeof a.grantScope === "string" && a.grantScope) {
    const grant = `Allow for this conversation: ${a.grantScope}`;
    row.append(button(grant, () => respond(a, "allow_conversation"), "Run it, and exactly this again without asking in this conversation"));
  } else if (a.noGrantReason) {
    row.append(h("span", { class: "no-grant" }, `Cannot be allowed for this conversation: ${a.noGrantReason}`));
  }
  row.append(button("Reject", () => respond(a, "deny"), "Do not run it"));
  el.append(row);
  return el;
}

const OUTCOMES = { allow: "Accepted", allow_conversation: "Allowed for this conversation", deny: "Rejected" };

/** What an answered approval says: an "allow for this conversation" of what could not be granted
 * comes back as `allow` with `notGranted` saying why, never as a grant made. */
function outcome(a) {
  const base = OUTCOMES[a.decision] || `Answered (${a.decision})`;
  if (a.decision === "deny" && a.message) return `${base}: ${a.message}`;
  if (a.notGranted) return `${base}. ${a.notGranted}`;
  if (a.decision === "allow_conversation" && a.grantScope) return `${base}: ${a.grantScope}`;
  return base;
}

function respond(a, decision) {
  return guarded("approval", () =>
    call("openvaala/approvals/respond", { conversationId: ui.cid, approvalId: a.approvalId, decision })
  );
}

// -- the rest of the panel ---------------------------------------------------------------

function renderHeader(note = "") {
  const st = ui.state;
  if (!st) return;
  const root = session(st, null);
  const status = st.conversation.status || "idle";
  const usage = root && root.usage ? ` · context ${root.usage.used}/${root.usage.contextWindow}` : "";
  showStatus(`${st.conversation.title || "New conversation"} — ${status}${usage}${note}`);
  document.body.dataset.status = status;
  // The mode the daemon announced, whichever client switched it (conversation/updated).
  if (permission) permission.render(st.conversation);
}

// The conversation's permission mode, the web UI's select (docs/editors.md, "The chat panel").
let permission = null;
async function setPermissionMode(mode) {
  if (!ui.cid) return false;
  const params = { conversationId: ui.cid, mode };
  return (await guarded("mode", () => call("openvaala/setPermissionMode", params))) !== undefined;
}

function renderAgents() {
  const nav = $("agents");
  nav.replaceChildren();
  if (!ui.state) return;
  const tree = sessionTree(ui.state);
  if (tree.length < 2) return;
  for (const { session: s, depth } of tree) {
    const sid = s.info.parentSessionId ? s.info.sessionId : null;
    const label = `${"· ".repeat(depth)}${s.info.agent || "agent"} (${s.info.status || "idle"})`;
    const b = button(label, () => {
      ui.sessionId = sid;
      tellShown();
      renderAll();
    }, "Follow this agent");
    if (sid === ui.sessionId) b.classList.add("current");
    nav.append(b);
  }
}

function renderPlan() {
  const s = shownSession();
  const plan = s && s.plan;
  const el = $("plan");
  el.hidden = !plan || !(plan.steps || []).length;
  if (el.hidden) return;
  el.replaceChildren(
    h("div", { class: "who" }, "Plan"),
    h("ol", {}, ...plan.steps.map((step) => h("li", { class: step.status }, `${step.status === "completed" ? "☑" : "☐"} ${step.step || step.text || ""}`)))
  );
}

function renderInbox() {
  const s = shownSession();
  $("inbox").replaceChildren(...((s && s.inbox) || []).map(waitingRow));
}

// A message still waiting: yours can be taken back into the composer (nothing is lost) or made
// to interrupt the running turn and go next; a subagent's report to its parent is only shown.
function waitingRow(input) {
  if (input.origin === "subagent") return h("div", { class: "waiting" }, h("span", { class: "waiting-text" }, `(subagent) ${input.text}`));
  const act = (action) => guarded(action, () => call("openvaala/input", { action, inputId: input.inputId }));
  const withdraw = async () => {
    const cid = ui.cid;
    const r = await act("withdraw");
    if (r && typeof r.text === "string" && r.text) giveBack(cid, r.text);
  };
  return h(
    "div",
    { class: "waiting", "data-input": input.inputId },
    h("span", { class: "waiting-text" }, `(${input.mode}) ${input.text}`),
    button("Withdraw", withdraw, "Take it back into the composer"),
    button("Jump", () => act("jump"), "Stop the running turn and answer this next")
  );
}

async function refreshPicker() {
  const r = await guarded("conversations", () => call("openvaala/conversations/list", {}));
  if (!r) return;
  const picker = $("picker");
  const known = r.conversations.some((c) => c.conversationId === ui.cid);
  const options = r.conversations.map((c) => h("option", { value: c.conversationId }, `${c.title || "(untitled)"} · ${c.status}`));
  if (ui.cid && !known) options.unshift(h("option", { value: ui.cid }, ui.cid.slice(0, 8)));
  picker.replaceChildren(h("option", { value: "" }, "Conversation…"), ...options);
  picker.value = ui.cid || "";
  const agents = await guarded("agents", () => call("openvaala/agents", {}));
  if (agents && agents.agents) {
    $("agent").replaceChildren(...agents.agents.map((a) => h("option", { value: a.name }, a.name)));
  }
  const models = await guarded("models", () => call("openvaala/models", {}));
  if (models && models.models) {
    $("model").replaceChildren(...models.models.map((m) => h("option", { value: m.name }, m.name)));
  }
  showChoices();
}

// The agent and model selectors follow the agent on screen (the root's, or the one followed).
function showChoices() {
  const s = shownSession();
  if (!s) return;
  if (s.info.agent) $("agent").value = s.info.agent;
  if (s.info.model) $("model").value = s.info.model;
}

async function fork(upToItemId) {
  const params = { conversationId: ui.cid };
  if (upToItemId) params.upToItemId = upToItemId;
  const r = await guarded("fork", () => call("openvaala/fork", params));
  if (r) await open(r.conversation.conversationId);
}

async function rewind(cid, messageId) {
  const r = await guarded("rewind", () => call("openvaala/rewind", { conversationId: cid, messageId }));
  if (r) await open(r.conversation.conversationId, r.composerText || "");
}

async function send(mode) {
  const typed = $("text").value.trim();
  if (!typed && !imagesOf(ui.cid).length) return showStatus("the composer is empty", true);
  // Taken before a new conversation is opened for them (they were attached with none open).
  const sent = imagesOf(ui.cid).splice(0); // given back below if the send is refused
  if (!ui.cid) {
    const made = await guarded("new", () => call("openvaala/conversations/new", {}));
    if (!made) return giveBack(null, "", sent);
    await open(made.conversation.conversationId);
  }
  const cid = ui.cid;
  const sessionId = ui.sessionId;
  $("text").value = "";
  ui.drafts[cid] = "";
  save();
  // An MCP prompt or resource mention becomes the message to send; a server may take its time,
  // so the composer is cleared and the conversation fixed first (a second press, or another
  // conversation opened meanwhile, changes nothing). Refused: nothing is sent, the text goes back.
  drawImages();
  const text = typed ? await guarded("mcp", () => mcp.expand(typed)) : "";
  if (text === undefined) return giveBack(cid, typed, sent);
  const params = { conversationId: cid, text, mode };
  if (sessionId) params.sessionId = sessionId;
  if (sent.length) params.images = sent.map(({ data, name }) => ({ data, name }));
  try {
    await call("openvaala/send", params);
  } catch (err) {
    showStatus(`send: ${err.message || err}`, true);
    giveBack(cid, typed, sent); // as written: a prompt command or mention is read again at the next send
  }
}

// Not sent: the text goes back to its conversation's composer (or draft, when another one is on
// screen now), before whatever was typed there since, so nothing is lost.
function giveBack(cid, text, sent = []) {
  if (text) {
    const now = ui.cid === cid ? $("text").value : ui.drafts[cid] || "";
    const back = now.trim() ? `${text}\n\n${now}` : text;
    if (ui.cid === cid) $("text").value = back;
    ui.drafts[cid] = back;
    save();
  }
  if (sent.length) {
    imagesOf(cid).unshift(...sent); // the images of a message not sent wait for the next one
    drawImages();
  }
}

// -- images: picked from a file or pasted into the composer, sent with the next message as
// base64 (the bridge checks each: docs/editors.md, "The chat panel") ---------------------------
// Per conversation, like the drafts: switching shows that conversation's own ("" before any is
// open). Kept in memory only: images are too large for the workspace's state.
const images = {}; // cid -> [{data: base64, name, url: the data: URL of its thumbnail}]
const imagesOf = (cid) => (images[cid || ""] ||= []);

function attach(file) {
  if (!file.type.startsWith("image/")) return showStatus(`${file.name} is not an image`, true);
  const reader = new FileReader();
  const list = imagesOf(ui.cid); // the conversation it was attached in, even if switched meanwhile
  reader.onload = () => {
    const url = String(reader.result);
    list.push({ data: url.slice(url.indexOf(",") + 1), name: file.name || "pasted image", url });
    drawImages();
  };
  reader.onerror = () => showStatus(`could not read ${file.name}`, true);
  reader.readAsDataURL(file);
}

function drawImages() {
  const list = imagesOf(ui.cid);
  const shown = list.map((im) =>
    h("span", { class: "image" }, h("img", { src: im.url, alt: im.name, title: im.name }),
      button("×", () => { list.splice(list.indexOf(im), 1); drawImages(); }, `Remove ${im.name}`))
  );
  $("images").replaceChildren(...shown);
}

function insert(text) {
  const area = $("text");
  const at = area.selectionStart ?? area.value.length;
  area.value = area.value.slice(0, at) + text + area.value.slice(at);
  area.focus();
  ui.drafts[ui.cid] = area.value;
  save();
}

function contextBlock(sel) {
  const where = sel.first ? `${sel.path}:${sel.first}-${sel.last}` : sel.path;
  let fence = "```";
  while (sel.text.includes(fence)) fence += "`";
  return `\`${where}\`\n${fence}${sel.language || ""}\n${sel.text}\n${fence}\n`;
}

function wire() {
  permission = new PermissionModeSelect($("bar"), setPermissionMode);
  $("send").addEventListener("click", () => send("queue"));
  $("steer").addEventListener("click", () => send("steer"));
  $("jump").addEventListener("click", () => send("jump"));
  $("interrupt").addEventListener("click", () => ui.cid && guarded("interrupt", () => call("openvaala/interrupt", { conversationId: ui.cid })));
  $("new").addEventListener("click", async () => {
    const r = await guarded("new", () => call("openvaala/conversations/new", {}));
    if (r) await open(r.conversation.conversationId);
  });
  $("fork").addEventListener("click", () => ui.cid && fork(null));
  $("compact").addEventListener("click", async () => {
    const r = ui.cid && (await guarded("compact", () => call("openvaala/compact", { conversationId: ui.cid })));
    if (r) showStatus(r.compacted ? "compacted" : `not compacted: ${r.reason}`);
  });
  $("picker").addEventListener("change", (e) => e.target.value && open(e.target.value));
  $("agent").addEventListener("change", (e) => ui.cid && guarded("agent", () => call("openvaala/setAgent", { conversationId: ui.cid, agent: e.target.value })));
  $("model").addEventListener("change", (e) => {
    if (!ui.cid) return;
    const params = { conversationId: ui.cid, model: e.target.value };
    if (ui.sessionId) params.sessionId = ui.sessionId;
    guarded("model", () => call("openvaala/setModel", params));
  });
  $("file").addEventListener("click", async () => {
    const path = await guarded("file", () => host("file", {}));
    if (path) insert(`@${path} `);
  });
  $("selection").addEventListener("click", async () => {
    const sel = await guarded("selection", () => host("selection", {}));
    if (sel) insert(contextBlock(sel));
    else showStatus("no editor selection to add", true);
  });
  $("text").addEventListener("input", () => {
    if (ui.cid) ui.drafts[ui.cid] = $("text").value;
    save();
  });
  $("image").addEventListener("click", () => $("image-file").click());
  $("image-file").addEventListener("change", (e) => {
    for (const file of e.target.files) attach(file);
    e.target.value = "";
  });
  $("text").addEventListener("paste", (e) => {
    const files = [...(e.clipboardData ? e.clipboardData.files : [])].filter((f) => f.type.startsWith("image/"));
    if (!files.length) return;
    e.preventDefault();
    for (const file of files) attach(file);
  });
  $("text").addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    if (e.ctrlKey || e.metaKey) send("queue");
    else if (e.altKey) send("steer");
    else return;
    e.preventDefault();
  });
}

const mcp = mcpPicker($("composer"), $("text"), call);
wire();
restore();
