// Activates editors/vscode/extension.js against stand-ins for `vscode` and
// `vscode-languageclient/node`, then plays the bridge's notifications; prints what it saw as JSON.
"use strict";
class EventEmitter {
  constructor() { this.listeners = []; this.event = (l) => this.listeners.push(l); }
  fire(v) { this.listeners.forEach((l) => l(v)); }
}
const Module = require("module");
const path = require("path");

const seen = { commands: [], requests: [], providers: [], status: [], notifications: [], asked: [], languages: [], progress: [] };
const opened = new EventEmitter();
const cancels = []; // the cancel of each progress the extension showed
// The user's answers to the approval buttons, in order (a function: answered later).
const answers = [];
const handlers = {};
const registered = {};
const statusItem = { show() { seen.status.push(this.text); } };
const vscode = {
  // Runs a palette command and returns the items it offered in a quick pick.
  _pick: async (name) => { seen.picked = []; await registered[name](); return seen.picked; },
  StatusBarAlignment: { Right: 2 },
  ProgressLocation: { Notification: 15 },
  EventEmitter,
  Uri: {
    parse: (s) => ({ scheme: s.split(":")[0], path: s.replace(/^[a-z]+:\/\/conversation/, ""), toString: () => s }),
    joinPath: (base, ...parts) => ({ ...base, path: [base.path, ...parts].join("/") }),
  },
  window: {
    activeTextEditor: undefined,
    createStatusBarItem: () => statusItem,
    registerWebviewViewProvider: (id, provider) => {
      seen.views = [...(seen.views || []), id];
      vscode._view = provider;
      return { dispose() {} };
    },
    onDidChangeActiveTextEditor: () => ({ dispose() {} }),
    showInputBox: async () => "typed text",
    showInformationMessage: (m) => seen.notifications.push(m),
    showWarningMessage: async (m, ...rest) => {
      if (!rest.length || typeof rest[0] !== "object") return seen.notifications.push(m);
      const [options, ...items] = rest;
      seen.asked.push({ message: m, options, items });
      const answer = answers.shift();
      return typeof answer === "function" ? answer() : answer;
    },
    showErrorMessage: (m) => seen.notifications.push(m),
    showTextDocument: async () => ({}),
    showQuickPick: async (items, options) => { seen.picked = items; seen.pickOptions = options; return vscode._choose ? vscode._choose(items) : undefined; },
    showOpenDialog: async (options) => { seen.folderDialog = options; return [{ fsPath: "/tmp/moved here" }]; },
    setStatusBarMessage: (m) => seen.notifications.push(m),
    withProgress: (options, task) => {
      const cancel = new EventEmitter();
      cancels.push(() => cancel.fire());
      const entry = { title: options.title, cancellable: options.cancellable, done: false };
      seen.progress.push(entry);
      return task({ report() {} }, { onCancellationRequested: cancel.event }).then(() => { entry.done = true; });
    },
  },
  workspace: {
    getConfiguration: () => ({ get: () => ["openvaala", "lsp"] }),
    registerTextDocumentContentProvider: (scheme, p) => { seen.providers.push(scheme); vscode._provider = p; return { dispose() {} }; },
    onDidOpenTextDocument: (listener) => { opened.event(listener); return { dispose() {} }; },
    textDocuments: [],
    openTextDocument: async (uri) => ({ uri }),
  },
  languages: { setTextDocumentLanguage: async (doc, language) => { seen.languages.push([doc.uri.toString(), language]); return doc; } },
  commands: {
    registerCommand: (name, run) => { seen.commands.push(name); registered[name] = run; return { dispose() {} }; },
    executeCommand: async (name, ...args) => { seen.executed = [...(seen.executed || []), [name, ...args.map(String)]]; },
  },
};
class LanguageClient {
  constructor(id, name, server, options) {
    seen.server = server;
    seen.selector = options.documentSelector;
    seen.initializationOptions = options.initializationOptions;
  }
  async start() { seen.started = true; this.initializeResult = { capabilities: { workspace: {} } }; }
  onNotification(method, handler) { handlers[method] = handler; }
  async sendRequest(method, params) {
    seen.requests.push([method, params]);
    if (method === "openvaala/conversations/new") return { conversation: { conversationId: "a".repeat(32) } };
    if (method === "openvaala/render") return { text: "# rendered" };
    if (method === "openvaala/subscribe") {
      const conversation = { conversationId: params.conversationId, permissionMode: "auto-edit", permissionModes: ["plan", "ask", "auto-edit"] };
      return { snapshot: { conversation, sessions: [] } };
    }
    if (method === "openvaala/agents") return { agents: [{ name: "default", description: "General" }, { name: "other", description: "Another" }] };
    if (method === "workspace/executeCommand" && params.arguments[0].approvalId === "late") {
      throw Object.assign(new Error("approval late was already answered"), { data: { kind: "already_resolved" } });
    }
    return {};
  }
  stop() {}
  dispose() {}
}
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === "vscode" || request === "vscode-languageclient/node") return request;
  return resolve.call(this, request, ...rest);
};
require.cache.vscode = { id: "vscode", filename: "vscode", loaded: true, exports: vscode };
require.cache["vscode-languageclient/node"] = { id: "lc", filename: "lc", loaded: true, exports: { LanguageClient } };

(async () => {
  const ext = require(path.resolve(process.argv[2], "extension.js"));
  const context = { subscriptions: [], extensionUri: { scheme: "file", path: process.argv[2] } };
  await ext.activate(context);
  seen.started_at_activation = Boolean(seen.started);
  await registered["openvaala.ui.new"]();
  seen.handlers = Object.keys(handlers).sort();
  // Transcripts opened by Fork, Rewind (a new conversation each) and Follow (a subagent's
  // session), through the bridge's showDocument, become Markdown too; VS Code then reopens each
  // as Markdown, which is left alone (no loop).
  for (const tail of ["b".repeat(32), "c".repeat(32), "a".repeat(32) + "/session/" + "d".repeat(32)]) {
    const uri = vscode.Uri.parse("openvaala://conversation/" + tail);
    opened.fire({ uri, languageId: "plaintext" });
    opened.fire({ uri, languageId: "markdown" });
  }
  opened.fire({ uri: vscode.Uri.parse("file:///tmp/x.py"), languageId: "python" });
  await new Promise((r) => setTimeout(r, 10));
  await registered["openvaala.ui.send"]();
  handlers["$/openvaala/event"]({ conversationId: "a".repeat(32), seq: 1, method: "conversation/updated", params: { conversation: { status: "running" } } });
  // The running turn has a cancel button: it interrupts the conversation's turn.
  cancels[0]();
  await new Promise((r) => setTimeout(r, 10));
  handlers["$/openvaala/usage"]({ conversationId: "a".repeat(32), root: true, text: "77/32k (0%, reported)", used: 77, contextWindow: 32000, source: "reported", threshold: 25600 });
  // Approvals: buttons, answered through the bridge's command.
  const cid = "a".repeat(32);
  // The bridge's answers name what "allow for this conversation" covers (openvaala_lsp/approvals.py).
  const answersFor = (id) => [
    { title: "Allow once", decision: "allow" },
    { title: `Allow for this conversation: shell: exactly the command \`echo ${id}\`; nothing else`, decision: "allow_conversation" },
    { title: "Deny", decision: "deny" },
  ];
  const approval = (id) => ({ conversationId: cid, approvalId: id, agent: "default", tool: "shell", summary: "echo hi", text: `OpenVaala: default wants to use shell: echo ${id}`, answers: answersFor(id) });
  answers.push("Allow once");
  await handlers["$/openvaala/approvalRequested"](approval("one"));
  seen.status_waiting = seen.status[seen.status.length - 1];
  handlers["$/openvaala/approvalResolved"]({ conversationId: cid, approvalId: "one", decision: "allow" });
  answers.push("Deny with a message…");
  await handlers["$/openvaala/approvalRequested"](approval("two"));
  // Answered elsewhere while the buttons were up: nothing is sent, one short message.
  answers.push(() => {
    handlers["$/openvaala/approvalResolved"]({ conversationId: cid, approvalId: "three", decision: "deny" });
    return "Allow once";
  });
  await handlers["$/openvaala/approvalRequested"](approval("three"));
  // Answered elsewhere just as this answer left: the bridge's already_resolved, one short message.
  answers.push("Deny");
  await handlers["$/openvaala/approvalRequested"](approval("late"));
  // Dismissed: nothing is sent; it stays pending.
  answers.push(undefined);
  await handlers["$/openvaala/approvalRequested"](approval("four"));
  // A write with its diff, the panel not on screen: the diff editor first, then asked again.
  const write = { ...approval("five"), tool: "write_file", diffs: [{ path: "a.txt", kind: "update", unified: "-x\n+y\n", truncated: false, oldText: "x\n", newText: "y\n" }] };
  answers.push("Show the Diff", "Allow once");
  await handlers["$/openvaala/approvalRequested"](write);
  handlers["$/openvaala/approvalResolved"]({ conversationId: cid, approvalId: "five", decision: "allow" });
  seen.pending = (await vscode._pick("openvaala.ui.approvals")).map((i) => i.label);
  for (const id of ["two", "late", "four"]) {
    handlers["$/openvaala/approvalResolved"]({ conversationId: cid, approvalId: id, decision: "deny" });
  }
  handlers["$/openvaala/event"]({ conversationId: cid, seq: 2, method: "conversation/updated", params: { conversation: { status: "idle" } } });
  await new Promise((r) => setTimeout(r, 10));
  seen.rendered = await vscode._provider.provideTextDocumentContent(vscode.Uri.parse("openvaala://conversation/" + "a".repeat(32)));
  // A moved conversation fixed from the palette: the agent from a quick pick, the directory from
  // a folder picker, each through the bridge's command (kept apart from the approvals' requests).
  const requestsBefore = seen.requests.length;
  const notesBefore = seen.notifications.length;
  vscode._choose = (items) => items.find((i) => i.label === "other");
  seen.agentChoices = (await vscode._pick("openvaala.ui.setAgent")).map((i) => `${i.label}: ${i.description}`);
  vscode._choose = undefined;
  await registered["openvaala.ui.setCwd"]();
  seen.fix = seen.requests.splice(requestsBefore);
  seen.fixNotes = seen.notifications.splice(notesBefore);
  // A turn that goes on over a reconnection (ssh dropped; the daemon over there did not stop):
  // its progress and the status bar's spinner stay, until `connected` says it no longer runs.
  const goesOn = "e".repeat(32);
  const progressBefore = seen.progress.length;
  const notesBefore2 = seen.notifications.length;
  handlers["$/openvaala/event"]({ conversationId: goesOn, seq: 1, method: "conversation/updated", params: { conversation: { status: "running" } } });
  handlers["$/openvaala/connection"]({ state: "reconnecting" });
  handlers["$/openvaala/connection"]({ state: "connected", running: [goesOn] });
  await new Promise((r) => setTimeout(r, 10));
  seen.reconnect = { kept: seen.progress.slice(progressBefore).map((p) => p.done) };
  handlers["$/openvaala/connection"]({ state: "reconnecting" });
  handlers["$/openvaala/connection"]({ state: "connected", restarted: true, running: [] });
  await new Promise((r) => setTimeout(r, 10));
  seen.reconnect.ended = seen.progress.splice(progressBefore).map((p) => p.done);
  seen.reconnect.notes = seen.notifications.splice(notesBefore2);
  // The chat panel on screen gets each MCP server's state.
  seen.posted = [];
  const webview = { cspSource: "vscode-resource:", asWebviewUri: (u) => u, postMessage: (m) => seen.posted.push(m), onDidReceiveMessage() {} };
  vscode._view.resolveWebviewView({ webview, visible: true, onDidDispose() {} });
  handlers["$/openvaala/mcpStatus"]({ name: "t", status: "ready", tools: ["echo"] });
  const beforeMcp = seen.requests.length;
  await registered["openvaala.ui.mcp"]();
  seen.mcp = seen.requests.splice(beforeMcp);
  // The permission mode from the palette: the allowed modes with the current one marked; the one
  // picked goes to the bridge, the current one picked again sends nothing.
  if (registered["openvaala.ui.setPermissionMode"]) {
    const beforeMode = seen.requests.length;
    const notesMode = seen.notifications.length;
    vscode._choose = (items) => items.find((i) => i.label.endsWith("Plan (read-only)"));
    seen.modeChoices = (await vscode._pick("openvaala.ui.setPermissionMode")).map((i) => [i.label, i.description || ""]);
    seen.modePrompt = seen.pickOptions.placeHolder;
    vscode._choose = (items) => items.find((i) => i.description === "current");
    await registered["openvaala.ui.setPermissionMode"]();
    vscode._choose = undefined;
    seen.mode = seen.requests.splice(beforeMode);
    seen.modeNotes = seen.notifications.splice(notesMode);
  }
  process.stdout.write(JSON.stringify(seen));
})().catch((err) => { console.error(err); process.exit(1); });
