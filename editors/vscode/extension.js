// OpenVaala for VS Code: a thin client of `openvaala lsp` (the editor bridge). No build step:
// `npm install` here, then load the folder as an extension (see docs/editors.md).
//
// The bridge does the work; this file adds the UI: palette commands (openvaala.ui.*), a status
// bar item with the context usage, the read-only transcript documents (openvaala://…), and the
// approval buttons (the extension asks itself, so it tells the bridge `approvals: "plugin"`).
// The bridge's own commands (openvaala.fork, openvaala.rewind, openvaala.follow, … used by the
// transcript's code lenses) are registered by the language client from executeCommandProvider.
"use strict";

const vscode = require("vscode");
// A packaged extension carries the language client bundled (dist/, made by `npm run bundle`, which
// `vsce package` runs first); a checkout loaded as a folder uses node_modules.
function languageClientModule() {
  try {
    return require("./dist/languageclient");
  } catch {
    return require("vscode-languageclient/node");
  }
}
const { LanguageClient } = languageClientModule();
const { ChatViewProvider } = require("./chat_view");

const SCHEME = "openvaala";
let client;
let status;
let panel; // the chat panel (chat_view.js)
const state = {
  current: undefined,
  usage: new Map(),
  running: new Map(),
  inbox: new Map(),
  approvals: new Map(), // approvalId -> $/openvaala/approvalRequested params, while unanswered
};

const DENY_WITH_MESSAGE = "Deny with a message…";
const ANSWERS = {
  "Allow once": "allow",
  "Allow for this conversation": "allow_conversation",
  Deny: "deny",
  [DENY_WITH_MESSAGE]: "deny",
};
const ALREADY = "OpenVaala: that approval was already answered.";
// The permission modes' names, as the chat panel's select shows them (permission_mode.js).
const MODE_LABELS = { plan: "Plan (read-only)", ask: "Ask every write", "auto-edit": "Auto-edit" };
const SHOW_DIFF = "Show the Diff";

function conversationOf(uri) {
  if (!uri || uri.scheme !== SCHEME) return undefined;
  const match = /^\/([0-9a-f]{32})/.exec(uri.path);
  return match ? match[1] : undefined;
}

function current() {
  const editor = vscode.window.activeTextEditor;
  return conversationOf(editor && editor.document.uri) || state.current;
}

function requireCurrent() {
  const cid = current();
  if (!cid) vscode.window.showWarningMessage("OpenVaala: open or start a conversation first.");
  return cid;
}

async function request(method, params) {
  try {
    await ensureClient();
    return await client.sendRequest(method, params || {});
  } catch (err) {
    vscode.window.showErrorMessage(`OpenVaala: ${err.message || err}`);
    throw err;
  }
}

function updateStatus() {
  const cid = current();
  const report = cid && state.usage.get(cid);
  if (!report) {
    status.text = "$(comment-discussion) OpenVaala";
    status.tooltip = "OpenVaala: no conversation";
  } else {
    const busy = state.running.get(cid) ? "$(sync~spin) " : "";
    const waiting = [...state.approvals.values()].some((a) => a.conversationId === cid) ? " $(warning) approval" : "";
    status.text = `${busy}$(comment-discussion) ${report.text}${waiting}`;
    status.command = waiting ? "openvaala.ui.approvals" : "openvaala.ui.usage";
    status.tooltip = `Context: ${report.used} of ${report.contextWindow} tokens (${report.source}); compaction at ${report.threshold}`;
  }
  status.show();
}

async function openConversation(cid) {
  await request("openvaala/subscribe", { conversationId: cid });
  state.current = cid;
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(`${SCHEME}://conversation/${cid}`));
  await vscode.window.showTextDocument(doc, { preview: false });
  updateStatus(); // Markdown: set by onDidOpenTextDocument, for every transcript
}

// Every transcript (opened here, or by the bridge's fork, rewind and follow) reads as Markdown.
// VS Code closes and reopens the document to change its language; the bridge keeps it live.
function markdown(doc) {
  if (doc.uri.scheme === SCHEME && doc.languageId !== "markdown") {
    return vscode.languages.setTextDocumentLanguage(doc, "markdown");
  }
}

// The running turn of each conversation, shown with the extension's own cancellable progress
// (the language client's work-done progress has no cancel button): cancelling interrupts it.
const turns = new Map(); // cid -> resolve of its progress

function showRunning(cid, busy) {
  if (busy && !turns.has(cid)) {
    vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "OpenVaala: working…", cancellable: true },
      (_progress, token) =>
        new Promise((resolve) => {
          turns.set(cid, resolve);
          token.onCancellationRequested(() => request("openvaala/interrupt", { conversationId: cid }).catch(() => {}));
        })
    );
  } else if (!busy && turns.has(cid)) {
    const resolve = turns.get(cid);
    turns.delete(cid);
    resolve();
  }
}

function sendWith(mode) {
  return async (text) => {
    const cid = requireCurrent();
    if (!cid) return;
    if (typeof text !== "string") {
      text = await vscode.window.showInputBox({ prompt: `OpenVaala (${mode})`, placeHolder: "Message" });
    }
    if (text) await request("openvaala/send", { conversationId: cid, text, mode });
  };
}

// Transcripts for a language client without LSP 3.18 textDocumentContent: openvaala/render,
// redrawn on $/openvaala/refresh.
class FallbackContent {
  constructor() {
    this.changed = new vscode.EventEmitter();
    this.onDidChange = this.changed.event;
  }
  async provideTextDocumentContent(uri) {
    const result = await request("openvaala/render", { uri: uri.toString() });
    return result.text;
  }
}

// Ask about one approval with buttons; a dismissed one stays pending (openvaala.ui.approvals).
// The bridge's answers for this request: "allow for this conversation" names exactly what it
// allows, and is absent when nothing can be granted (docs/security.md, "Approvals").
function answersOf(request) {
  if (!Array.isArray(request.answers)) return ANSWERS;
  const answers = {};
  for (const a of request.answers) answers[a.title] = a.decision;
  answers[DENY_WITH_MESSAGE] = "deny";
  return answers;
}

async function askApproval(request) {
  const answers = answersOf(request);
  // A write or patch: its change can be opened in VS Code's diff editor first, then asked again.
  const diffs = Array.isArray(request.diffs) ? request.diffs : [];
  const items = [...(diffs.length ? [SHOW_DIFF] : []), ...Object.keys(answers)];
  const pick = await vscode.window.showWarningMessage(request.text, { modal: false }, ...items);
  if (!pick) return;
  if (pick === SHOW_DIFF) {
    for (const diff of diffs) await panel.diffs.open(diff, request.approvalId);
    return state.approvals.has(request.approvalId) ? askApproval(request) : undefined;
  }
  let message;
  if (pick === DENY_WITH_MESSAGE) {
    message = await vscode.window.showInputBox({ prompt: "Message to the agent (why it is denied)" });
    if (message === undefined) return;
  }
  if (!state.approvals.has(request.approvalId)) return vscode.window.showInformationMessage(ALREADY);
  const args = { conversationId: request.conversationId, approvalId: request.approvalId, decision: answers[pick] };
  if (message) args.message = message;
  try {
    await ensureClient();
    await client.sendRequest("workspace/executeCommand", { command: "openvaala.respondApproval", arguments: [args] });
  } catch (err) {
    const kind = err && err.data && err.data.kind;
    if (kind === "already_resolved" || kind === "not_found") vscode.window.showInformationMessage(ALREADY);
    else vscode.window.showErrorMessage(`OpenVaala: ${err.message || err}`);
  }
}

const commands = {
  "openvaala.ui.new": async () => {
    const result = await request("openvaala/conversations/new", {});
    await openConversation(result.conversation.conversationId);
  },
  "openvaala.ui.chat": async () => {
    await panel.show(current());
  },
  "openvaala.ui.open": async () => {
    const { conversations } = await request("openvaala/conversations/list", {});
    const pick = await vscode.window.showQuickPick(
      conversations.map((c) => ({ label: c.title, description: `${c.status} · ${c.cwd}`, id: c.conversationId })),
      { placeHolder: "Conversation" }
    );
    if (pick) await openConversation(pick.id);
  },
  "openvaala.ui.send": sendWith("queue"),
  "openvaala.ui.steer": sendWith("steer"),
  "openvaala.ui.jump": sendWith("jump"),
  "openvaala.ui.input": async () => {
    const cid = requireCurrent();
    const waiting = (cid && state.inbox.get(cid)) || [];
    if (!waiting.length) return vscode.window.showInformationMessage("OpenVaala: nothing is waiting.");
    const input = await vscode.window.showQuickPick(
      waiting.map((i) => ({ label: i.text, description: i.mode, id: i.inputId })),
      { placeHolder: "Waiting message" }
    );
    if (!input) return;
    const action = await vscode.window.showQuickPick(["edit", "withdraw", "steer", "jump"]);
    if (!action) return;
    const params = { action, inputId: input.id };
    if (action === "edit") {
      params.text = await vscode.window.showInputBox({ value: input.label });
      if (!params.text) return;
    }
    await request("openvaala/input", params);
  },
  "openvaala.ui.interrupt": async () => {
    const cid = requireCurrent();
    if (cid) await request("openvaala/interrupt", { conversationId: cid });
  },
  "openvaala.ui.compact": async () => {
    const cid = requireCurrent();
    if (!cid) return;
    const result = await request("openvaala/compact", { conversationId: cid });
    vscode.window.showInformationMessage(
      result.compacted ? "OpenVaala: compacted." : `OpenVaala: not compacted (${result.reason}).`
    );
  },
  "openvaala.ui.init": async () => {
    const cid = requireCurrent();
    if (cid) await request("openvaala/init", { conversationId: cid });
  },
  "openvaala.ui.remember": async () => {
    const cid = requireCurrent();
    if (!cid) return;
    const text = await vscode.window.showInputBox({ prompt: "OpenVaala: remember for later conversations (start with \"user \" for every project)" });
    if (!text) return;
    const user = text.startsWith("user ");
    await request("workspace/executeCommand", {
      command: "openvaala.remember",
      arguments: [{ conversationId: cid, scope: user ? "user" : "project", text: user ? text.slice(5) : text }],
    });
  },
  "openvaala.ui.memory": async () => {
    const cid = requireCurrent();
    if (cid) await request("workspace/executeCommand", { command: "openvaala.memory", arguments: [{ conversationId: cid }] });
  },
  "openvaala.ui.fork": async () => {
    const cid = requireCurrent();
    if (cid) await request("workspace/executeCommand", { command: "openvaala.fork", arguments: [{ conversationId: cid }] });
  },
  "openvaala.ui.rewind": async () => {
    const cid = requireCurrent();
    if (!cid) return;
    const { snapshot } = await request("openvaala/subscribe", { conversationId: cid });
    const root = snapshot.sessions.find((s) => !s.parentSessionId);
    const messages = root.items.filter((i) => i.type === "user_message" && i.origin !== "subagent");
    const pick = await vscode.window.showQuickPick(
      messages.map((m) => ({ label: m.text.split("\n")[0], id: m.itemId })),
      { placeHolder: "Rewind to just before…" }
    );
    if (pick) {
      await request("workspace/executeCommand", {
        command: "openvaala.rewind",
        arguments: [{ conversationId: cid, messageId: pick.id }],
      });
    }
  },
  "openvaala.ui.follow": async () => {
    const cid = requireCurrent();
    if (!cid) return;
    const tree = await request("openvaala/agents", { conversationId: cid });
    const items = [];
    const walk = (nodes, depth) => {
      for (const n of nodes) {
        items.push({ label: `${"  ".repeat(depth)}${n.agent}`, description: n.status, uri: n.uri });
        walk(n.children || [], depth + 1);
      }
    };
    walk(tree.sessions, 0);
    const pick = await vscode.window.showQuickPick(items, { placeHolder: "Agent" });
    if (pick) await vscode.window.showTextDocument(vscode.Uri.parse(pick.uri), { preview: false });
  },
  "openvaala.ui.approvals": async () => {
    const waiting = [...state.approvals.values()];
    if (!waiting.length) return vscode.window.showInformationMessage("OpenVaala: no approval is waiting.");
    const pick = await vscode.window.showQuickPick(
      waiting.map((a) => ({ label: `${a.agent}: ${a.summary || a.tool}`, description: a.reason, request: a })),
      { placeHolder: "Waiting approval" }
    );
    if (pick) await askApproval(pick.request);
  },
  // A conversation whose agent or directory is missing here (moved, or the config edited): the
  // transcript says so and names these.
  "openvaala.ui.setAgent": async () => {
    const cid = requireCurrent();
    if (!cid) return;
    const { agents } = await request("openvaala/agents", {});
    const pick = await vscode.window.showQuickPick(
      agents.map((a) => ({ label: a.name, description: a.description, name: a.name })),
      { placeHolder: "Agent for this conversation" }
    );
    if (!pick) return;
    await request("workspace/executeCommand", {
      command: "openvaala.setAgent",
      arguments: [{ conversationId: cid, agent: pick.name }],
    });
    vscode.window.showInformationMessage(`OpenVaala: agent ${pick.name}.`);
  },
  "openvaala.ui.setCwd": async () => {
    const cid = requireCurrent();
    if (!cid) return;
    const folders = vscode.workspace.workspaceFolders || [];
    const picked = await vscode.window.showOpenDialog({
      canSelectFiles: false,
      canSelectFolders: true,
      canSelectMany: false,
      defaultUri: folders.length ? folders[0].uri : undefined,
      openLabel: "Use as Working Directory",
    });
    if (!picked || !picked.length) return;
    const cwd = picked[0].fsPath;
    await request("workspace/executeCommand", {
      command: "openvaala.setCwd",
      arguments: [{ conversationId: cid, cwd }],
    });
    vscode.window.showInformationMessage(`OpenVaala: working directory ${cwd}.`);
  },
  // The chat panel's select, from the palette: the modes the agent allows, narrowest first, the
  // one in force marked; the daemon stays the judge (a refused one is its error).
  "openvaala.ui.setPermissionMode": async () => {
    const cid = requireCurrent();
    if (!cid) return;
    const { snapshot } = await request("openvaala/subscribe", { conversationId: cid });
    const conv = snapshot.conversation;
    const label = (mode) => MODE_LABELS[mode] || mode;
    const now = conv.permissionMode;
    const pick = await vscode.window.showQuickPick(
      (conv.permissionModes || []).map((mode) => ({
        label: `${mode === now ? "$(check)" : "$(blank)"} ${label(mode)}`,
        description: mode === now ? "current" : undefined,
        mode,
      })),
      { placeHolder: `Permission mode (now: ${label(now)})` }
    );
    if (!pick || pick.mode === now) return;
    await request("openvaala/setPermissionMode", { conversationId: cid, mode: pick.mode });
    vscode.window.showInformationMessage(`OpenVaala: permission mode ${label(pick.mode)}.`);
  },
  // The bridge answers with the servers and also shows their state as a message.
  "openvaala.ui.mcp": async () => {
    await request("openvaala/mcp", {});
  },
  "openvaala.ui.usage": async () => {
    const cid = requireCurrent();
    if (!cid) return;
    const report = await request("openvaala/usage", { conversationId: cid });
    vscode.window.showInformationMessage(`OpenVaala context: ${report.text}`);
  },
};

let extensionContext;
let starting;
const fallback = new FallbackContent();
let fallbackRegistration;

// The bridge starts on first use (a command, or a transcript being opened), not in every window.
function ensureClient() {
  if (!starting) {
    starting = startClient(extensionContext).catch((err) => {
      starting = undefined; // the next use tries again
      throw err;
    });
  }
  return starting;
}

async function startClient(context) {
  const [command, ...args] = vscode.workspace.getConfiguration("openvaala").get("command");
  client = new LanguageClient(
    "openvaala",
    "OpenVaala",
    { command, args },
    {
      documentSelector: [{ scheme: SCHEME }],
      // The extension asks about approvals and shows turns (with a cancel button) itself.
      initializationOptions: { approvals: "plugin", progress: false },
    }
  );
  await client.start();
  context.subscriptions.push(client);
  const caps = client.initializeResult && client.initializeResult.capabilities;
  const served = caps && caps.workspace && caps.workspace.textDocumentContent;
  if (served && fallbackRegistration) {
    fallbackRegistration.dispose(); // the language client serves transcripts itself
    fallbackRegistration = undefined;
  }
  client.onNotification("$/openvaala/refresh", ({ uri }) => fallback.changed.fire(vscode.Uri.parse(uri)));
  client.onNotification("$/openvaala/usage", (report) => {
    if (report.root) state.usage.set(report.conversationId, report);
    updateStatus();
  });
  client.onNotification("$/openvaala/event", (event) => {
    panel.notify("$/openvaala/event", event);
    const p = event.params || {};
    if (event.method === "conversation/updated" && p.conversation) {
      const busy = p.conversation.status === "running" || p.conversation.status === "awaiting_approval";
      state.running.set(event.conversationId, busy);
      showRunning(event.conversationId, busy);
      updateStatus();
    } else if (event.method === "conversation/snapshot" && p.snapshot) {
      // A redraw from scratch (e.g. a new daemon after a crash) replaces a stale running marker.
      const s = p.snapshot.conversation && p.snapshot.conversation.status;
      state.running.set(event.conversationId, s === "running" || s === "awaiting_approval");
      showRunning(event.conversationId, state.running.get(event.conversationId));
      updateStatus();
    } else if (event.method === "inbox/updated") {
      state.inbox.set(event.conversationId, p.inputs || []);
    }
  });
  client.onNotification("$/openvaala/connection", (params) => {
    panel.notify("$/openvaala/connection", params);
    const { state: connection, restarted, message } = params;
    if (connection === "reconnecting") {
      // The running markers stay: a daemon reached again (over ssh) may never have stopped the
      // turn. `connected` says which turns go on.
      vscode.window.setStatusBarMessage("OpenVaala: connection to the daemon lost, reconnecting…", 5000);
    } else if (connection === "connected") {
      const running = new Set(params.running || []);
      for (const cid of new Set([...state.running.keys(), ...running])) {
        state.running.set(cid, running.has(cid));
        showRunning(cid, running.has(cid));
      }
      vscode.window.setStatusBarMessage(`OpenVaala: reconnected${restarted ? " (a new daemon was started)" : ""}`, 5000);
    } else if (connection === "disconnected") {
      state.running.clear(); // no daemon: nothing runs for this window
      for (const cid of [...turns.keys()]) showRunning(cid, false);
      vscode.window.showErrorMessage(`OpenVaala: the daemon is gone (${message}); start it with \`openvaala serve start\`.`);
    }
    updateStatus();
  });
  // Each MCP server's state, for the chat panel's resource picker and prompt menu.
  client.onNotification("$/openvaala/mcpStatus", (params) => panel.notify("$/openvaala/mcpStatus", params));
  client.onNotification("$/openvaala/approvalRequested", (request) => {
    state.approvals.set(request.approvalId, request);
    updateStatus();
    // The chat panel on screen shows it as a card with its diff: not asked twice.
    if (panel.showing(request.conversationId, request.sessionId)) return;
    return askApproval(request);
  });
  client.onNotification("$/openvaala/approvalResolved", ({ approvalId }) => {
    state.approvals.delete(approvalId);
    updateStatus();
  });
  client.onNotification("$/openvaala/composer", async ({ conversationId, text }) => {
    state.current = conversationId;
    // A rewind from a transcript's lens: into the chat panel's composer when it is on screen.
    if (panel.visible()) return panel.show(conversationId, text);
    const edited = await vscode.window.showInputBox({ prompt: "OpenVaala (rewound)", value: text });
    if (edited) await request("openvaala/send", { conversationId, text: edited, mode: "queue" });
  });
  updateStatus();
}

async function activate(context) {
  extensionContext = context;
  panel = new ChatViewProvider(context, {
    ensure: async () => {
      await ensureClient();
      return client;
    },
    // The palette's commands and the status bar act on the conversation the panel shows.
    shown: (cid) => {
      state.current = cid;
      updateStatus();
    },
  });
  panel.register();
  // Registered now, so a transcript opened before the bridge runs (a restored tab) resolves.
  fallbackRegistration = vscode.workspace.registerTextDocumentContentProvider(SCHEME, fallback);
  context.subscriptions.push({ dispose: () => fallbackRegistration && fallbackRegistration.dispose() });
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  status.command = "openvaala.ui.usage";
  context.subscriptions.push(status);
  for (const [name, run] of Object.entries(commands)) {
    context.subscriptions.push(vscode.commands.registerCommand(name, run));
  }
  context.subscriptions.push(vscode.window.onDidChangeActiveTextEditor(updateStatus));
  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument((doc) => {
      if (doc.uri.scheme !== SCHEME) return;
      ensureClient().then(() => markdown(doc));
    })
  );
  for (const doc of vscode.workspace.textDocuments || []) {
    if (doc.uri.scheme === SCHEME) ensureClient().then(() => markdown(doc));
  }
  updateStatus();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
