// The chat panel: a webview view (docs/editors.md, "The chat panel"). The webview (media/chat.js)
// keeps the conversation's state itself, folded from a snapshot and the bridge's events with the
// web UI's own fold (state.js); this side only relays: the webview's requests to the bridge, the
// bridge's notifications to the webview, and the few things only VS Code can do (the diff
// editor, a file picker, the editor's selection).
//
// Security (VS Code's webview guidance): scripts only from the extension's media/ folder, with a
// nonce; no remote content (a CSP without any http source); localResourceRoots = media/.
"use strict";

const crypto = require("crypto");
const vscode = require("vscode");
const { savedState } = require("./saved_state");

const VIEW = "openvaala.chat";
const DIFF_SCHEME = "openvaala-diff";
// The webview's {cid, drafts, cut}, kept in the workspace's state (checked: saved_state.js): VS Code saves a webview view's own
// state only about once a minute, so a reload sooner would lose it (see media/chat.js's save).
const SAVED = "openvaala.chat.saved";
// Bridge notifications the webview sees (the rest is the extension's own business).
const FORWARDED = [
  "$/openvaala/event",
  "$/openvaala/approvalRequested",
  "$/openvaala/approvalResolved",
  "$/openvaala/connection",
  "$/openvaala/mcpStatus",
];
// The bridge requests the webview may make: what its own buttons do, nothing else. The webview
// shows model-written text, so what it posts is not trusted further than that (docs/editors.md,
// "The chat panel"): no cwd change, memory write, shutdown or `workspace/executeCommand`.
const PANEL_REQUESTS = new Set([
  "openvaala/agents",
  "openvaala/approvals/respond",
  "openvaala/compact",
  "openvaala/conversations/list",
  "openvaala/conversations/new",
  "openvaala/fork",
  "openvaala/input",
  "openvaala/interrupt",
  "openvaala/mcp/getPrompt",
  "openvaala/mcp/list",
  "openvaala/mcp/readResource",
  "openvaala/models",
  "openvaala/read",
  "openvaala/rewind",
  "openvaala/send",
  "openvaala/setAgent",
  "openvaala/setModel",
  "openvaala/setPermissionMode",
  "openvaala/subscribe",
]);

// The two sides of an approval's diff, served read-only to the diff editor.
class DiffContent {
  constructor() {
    this.texts = new Map(); // uri string -> text
  }
  provideTextDocumentContent(uri) {
    return this.texts.get(uri.toString()) || "";
  }
  open(diff, approvalId) {
    const side = (name, text) => {
      const uri = vscode.Uri.parse(`${DIFF_SCHEME}:/${approvalId}/${name}/${diff.path}`);
      this.texts.set(uri.toString(), text || "");
      return uri;
    };
    const left = side("before", diff.oldText);
    const right = side("after", diff.newText);
    const title = `${diff.path} (${diff.kind}, proposed)`;
    return vscode.commands.executeCommand("vscode.diff", left, right, title, { preview: true });
  }
}

function nonce() {
  return crypto.randomBytes(18).toString("base64").replace(/[^A-Za-z0-9]/g, "");
}

/** The panel's HTML: a strict CSP, every script and style from media/ (see the header). */
function html(webview, mediaUri) {
  const n = nonce();
  const media = (p) => webview.asWebviewUri(vscode.Uri.joinPath(mediaUri, p)).toString();
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${n}' ${webview.cspSource}`,
    `style-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${media("chat.css")}">
<link rel="stylesheet" href="${media("web/vendor/hljs-github-dark.min.css")}">
<title>OpenVaala</title></head>
<body>${BODY}
<script type="module" nonce="${n}" src="${media("chat.js")}"></script>
</body></html>`;
}

// The panel's skeleton; media/chat.js fills it.
const BODY = `
<header id="bar">
  <select id="picker" aria-label="Conversation"></select>
  <button id="new" title="New conversation">New</button>
  <button id="fork" title="Fork the conversation">Fork</button>
  <button id="compact" title="Compact the context">Compact</button>
  <select id="agent" aria-label="Agent"></select>
  <select id="model" aria-label="Model"></select>
</header>
<div id="status" role="status"></div>
<nav id="agents"></nav>
<section id="plan" hidden></section>
<main id="transcript" aria-live="polite"></main>
<section id="inbox"></section>
<footer id="composer">
  <textarea id="text" rows="4" placeholder="Message (Ctrl+Enter send, Alt+Enter steer)"></textarea>
  <div id="images"></div>
  <input id="image-file" type="file" accept="image/png,image/jpeg,image/gif,image/webp" multiple hidden>
  <div class="row composer-row">
    <button id="send">Send</button>
    <button id="steer">Steer</button>
    <button id="jump">Jump</button>
    <button id="interrupt">Stop</button>
    <button id="file" title="Add a file as context">@file</button>
    <button id="selection" title="Add the editor's selection">Add selection</button>
    <button id="image" title="Attach an image (or paste one into the message)">Image</button>
  </div>
</footer>`;

class ChatViewProvider {
  constructor(context, bridge) {
    this.context = context;
    this.bridge = bridge; // { ensure(): Promise<client>, shown?(conversationId) }
    this.view = undefined;
    this.shown = undefined; // the conversation the webview shows (it says so when it changes)
    this.following = null; // the subagent it shows instead of the root agent, if any
    this.diffs = new DiffContent();
    this.mediaUri = vscode.Uri.joinPath(context.extensionUri, "media");
  }

  register() {
    const subs = this.context.subscriptions;
    subs.push(vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, this.diffs));
    subs.push(
      vscode.window.registerWebviewViewProvider(VIEW, this, { webviewOptions: { retainContextWhenHidden: true } })
    );
  }

  visible() {
    return Boolean(this.view && this.view.visible);
  }

  /** Whether the panel on screen shows an approval of this conversation (requested by the agent
   * `sessionId`): the root agent's transcript shows every approval, a subagent's only its own. */
  showing(conversationId, sessionId) {
    if (!this.visible() || this.shown !== conversationId) return false;
    return !this.following || this.following === sessionId;
  }

  /** Called by the extension for every forwarded bridge notification. */
  notify(method, params) {
    if (this.view && FORWARDED.includes(method)) {
      this.view.webview.postMessage({ type: "notification", method, params });
    }
  }

  resolveWebviewView(view) {
    this.view = view;
    view.webview.options = { enableScripts: true, localResourceRoots: [this.mediaUri] };
    view.webview.html = html(view.webview, this.mediaUri);
    view.webview.onDidReceiveMessage((message) => this.receive(message));
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
    });
  }

  async receive(message) {
    const reply = (body) => this.view && this.view.webview.postMessage({ type: "response", id: message.id, ...body });
    try {
      if (message.type === "request") {
        if (!PANEL_REQUESTS.has(message.method)) {
          throw new Error(`the chat panel may not ask the bridge for ${String(message.method)}`);
        }
        const client = await this.bridge.ensure();
        reply({ result: await client.sendRequest(message.method, message.params || {}) });
      } else if (message.type === "shown") {
        this.shown = message.conversationId;
        this.following = message.sessionId || null;
        if (this.bridge.shown) this.bridge.shown(message.conversationId);
      } else if (message.type === "state") {
        await this.context.workspaceState.update(SAVED, savedState(message.state));
      } else if (message.type === "host") {
        reply({ result: (await this.host(message.action, message.args || {})) ?? null });
      }
    } catch (err) {
      reply({ error: { message: String((err && err.message) || err), data: (err && err.data) || null } });
    }
  }

  async host(action, args) {
    if (action === "restore") return this.context.workspaceState.get(SAVED) || null;
    if (action === "diff") return this.diffs.open(args.diff, args.approvalId);
    if (action === "file") {
      const files = await vscode.workspace.findFiles("**/*", "**/{node_modules,.git}/**", 2000);
      const pick = await vscode.window.showQuickPick(
        files.map((f) => ({ label: vscode.workspace.asRelativePath(f), uri: f })),
        { placeHolder: "File to add as context" }
      );
      return pick ? pick.label : null;
    }
    if (action === "selection") {
      const editor = vscode.window.activeTextEditor;
      if (!editor) return null;
      const sel = editor.selection;
      const range = sel.isEmpty ? undefined : sel;
      return {
        path: vscode.workspace.asRelativePath(editor.document.uri),
        language: editor.document.languageId,
        text: editor.document.getText(range),
        first: range ? range.start.line + 1 : null,
        last: range ? range.end.line + 1 : null,
      };
    }
    throw new Error(`unknown panel action: ${action}`);
  }

  /** Show the panel on a conversation (a palette command, a fork or rewind from elsewhere). */
  async show(conversationId, composerText) {
    await vscode.commands.executeCommand(`${VIEW}.focus`);
    // Without a conversation the panel shows the one it had (its saved state), or the picker.
    if (this.view && conversationId) this.view.webview.postMessage({ type: "open", conversationId, composerText });
  }
}

module.exports = { ChatViewProvider, FORWARDED, PANEL_REQUESTS, VIEW, html };
