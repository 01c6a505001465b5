// The chat panel's relay (editors/vscode/chat_view.js) against a stand-in `vscode` module and a
// bridge that records what reaches it: `node vscode_panel_relay.js EXT_DIR` posts the webview
// messages read as JSON lines on stdin, one at a time, and prints what the bridge was asked and
// what the webview was answered.
"use strict";
const Module = require("module");
const path = require("path");

const ext = process.argv[2];
const notices = []; // what VS Code was asked to show as a notification
const vscode = {
  Uri: { joinPath: (uri, ...parts) => ({ path: path.join(uri.path, ...parts) }) },
  window: { showInformationMessage: async (text) => notices.push(text) },
};
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === "vscode" ? request : resolve.call(this, request, ...rest);
};
require.cache.vscode = { id: "vscode", filename: "vscode", loaded: true, exports: vscode };
const { ChatViewProvider } = require(path.resolve(ext, "chat_view.js"));

const asked = [];
const answered = [];
const client = {
  sendRequest: async (method, params) => {
    asked.push([method, params]);
    return { ok: true };
  },
};
const stored = new Map(); // the workspace's state (context.workspaceState)
const workspaceState = {
  get: (key) => stored.get(key),
  update: async (key, value) => stored.set(key, JSON.parse(JSON.stringify(value))),
};
const provider = new ChatViewProvider({ extensionUri: { path: ext }, subscriptions: [], workspaceState }, {
  ensure: async () => client,
});
provider.view = { visible: true, webview: { postMessage: (m) => answered.push(m) } };

(async () => {
  let input = "";
  for await (const chunk of process.stdin) input += chunk;
  const showing = []; // {"showing": [conversationId, sessionId]} lines: what showing() answers
  for (const line of input.split("\n").filter(Boolean)) {
    const message = JSON.parse(line);
    if (message.showing) showing.push(provider.showing(...message.showing));
    else await provider.receive(message);
  }
  process.stdout.write(JSON.stringify({ asked, answered, showing, notices, stored: Object.fromEntries(stored) }));
})();
