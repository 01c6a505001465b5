// Copies the web UI's modules the chat panel shares (one implementation: the fold and the safe
// Markdown) from openvaala_web/static into media/web/, keeping their relative layout so their
// imports resolve. Run by `npm run web` and before packaging (vscode:prepublish); media/web/ is
// never edited by hand nor committed.
"use strict";
const fs = require("fs");
const path = require("path");

// The checkout's web UI; OPENVAALA_WEB_STATIC names it when this folder was copied elsewhere.
const STATIC =
  process.env.OPENVAALA_WEB_STATIC || path.resolve(__dirname, "..", "..", "..", "openvaala_web", "static");
const OUT = path.resolve(__dirname, "..", "media", "web");
const FILES = [
  "js/state.js",
  "js/markdown.js",
  "js/reading.js",
  "js/dom.js",
  "js/mcp_picker.js",
  "js/permission_mode.js",
  "vendor/marked.esm.js",
  "vendor/purify.es.mjs",
  "vendor/highlight.min.js",
  "vendor/hljs-github-dark.min.css",
  "vendor/LICENSE.marked",
  "vendor/LICENSE.dompurify",
  "vendor/LICENSE-MPL.dompurify",
  "vendor/LICENSE.highlightjs",
];

// Each file replaced atomically (a copy beside it, then renamed over it): a page or a packager
// reading media/web/ while this runs (two test runs at once) never sees half a file.
for (const file of FILES) {
  const to = path.join(OUT, file);
  fs.mkdirSync(path.dirname(to), { recursive: true });
  const partial = `${to}.${process.pid}.partial`;
  fs.copyFileSync(path.join(STATIC, file), partial);
  fs.renameSync(partial, to);
}
console.log(`copied ${FILES.length} files into ${path.relative(process.cwd(), OUT) || "."}`);
