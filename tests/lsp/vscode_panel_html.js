// Prints the chat panel's HTML as editors/vscode/chat_view.js makes it (its CSP, nonce and
// media/ URIs), for a webview served from BASE: `node vscode_panel_html.js EXT_DIR BASE`.
"use strict";
const Module = require("module");
const path = require("path");

const [ext, base] = process.argv.slice(2);
const vscode = {
  Uri: { joinPath: (uri, ...parts) => ({ path: path.join(uri.path, ...parts) }) },
};
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === "vscode" ? request : resolve.call(this, request, ...rest);
};
require.cache.vscode = { id: "vscode", filename: "vscode", loaded: true, exports: vscode };
const { html } = require(path.resolve(ext, "chat_view.js"));
const media = { path: path.resolve(ext, "media") };
const webview = {
  cspSource: base,
  asWebviewUri: (uri) => ({ toString: () => `${base}/${path.relative(media.path, uri.path)}` }),
};
process.stdout.write(html(webview, media));
