// A search snippet (conversation/list `snippet`, docs/protocol.md): plain text and the [start, end)
// ranges of the matched words in UTF-16 code units — a JavaScript string's own indexes. Matches
// become <mark> elements and everything else text nodes, so a message's text never becomes markup.

import { h } from "./dom.js";

/** Text nodes and <mark>s for a snippet; ranges out of order, overlapping or out of the text are skipped. */
export function snippetNodes(snippet) {
  const text = typeof snippet?.text === "string" ? snippet.text : "";
  const nodes = [];
  let at = 0;
  for (const range of Array.isArray(snippet?.matches) ? snippet.matches : []) {
    const [start, end] = Array.isArray(range) ? range : [];
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < at || end <= start || end > text.length) continue;
    if (start > at) nodes.push(text.slice(at, start));
    nodes.push(h("mark", {}, text.slice(start, end)));
    at = end;
  }
  if (at < text.length) nodes.push(text.slice(at));
  return nodes;
}

/** The words of a snippet as they stand in its message (FTS5 cuts at word boundaries and the
 * daemon adds "…" where the message goes on): what opening that conversation looks for. */
export function snippetNeedle(snippet) {
  const text = typeof snippet?.text === "string" ? snippet.text : "";
  return text.replace(/^…/, "").replace(/…$/, "").trim();
}
