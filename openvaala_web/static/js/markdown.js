// Safe Markdown: marked turns model text into HTML, DOMPurify keeps only inert HTML, and the
// result is inserted as a DOM fragment (never as a string the browser parses again).
//
// Raw HTML in the model's text is shown as text, not passed on as markup, except a few harmless
// tags without attributes (SAFE_TAG: <br>, <details>/<summary>, <kbd>, <sup>/<sub>): only those
// and the tags marked itself generates ever reach the parser. (Even an inert DOMParser document makes Chromium
// consider an `onerror=` attribute, which the CSP then reports.) Images are drawn only from
// `data:` URLs, so nothing is fetched because of what a model wrote.
//
// `MarkdownStream` renders a message while it streams: blocks that another block has followed are
// final and rendered once; only the last, growing block is rendered again on each delta.

import { Marked } from "../vendor/marked.esm.js";
import DOMPurify from "../vendor/purify.es.mjs";
import { enhanceCode } from "./reading.js";

const md = new Marked({ gfm: true, breaks: false, async: false });

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
const INLINE_IMAGE = /^data:image\/(png|gif|jpeg|webp);/i;

// The raw HTML let through: these tags exactly, with no attribute but `open` on <details>.
// Anything else — another tag, any other attribute — stays literal text, so no handler or URL a
// model wrote ever reaches the parser.
const SAFE_TAG = /<(\/?)(br|details|summary|kbd|sup|sub)(\s+open)?\s*(\/?)>/gi;

/** Raw HTML as text, except the safe tags (SAFE_TAG), which stay markup. A closing tag is markup
 * only after its opening one was (`<kbd onclick=…>k</kbd>` reads as it was written); `opened`
 * counts them across the calls of one rendering (marked hands inline tags over one by one). */
export function safeHtml(text, opened = new Map()) {
  let out = "";
  let last = 0;
  for (const match of String(text).matchAll(SAFE_TAG)) {
    const [whole, close, tag, open, selfClose] = match;
    const name = tag.toLowerCase();
    const depth = opened.get(name) || 0;
    let fine = (!open || (name === "details" && !close)) && (!selfClose || name === "br");
    if (fine && close && name !== "br") fine = depth > 0;
    if (fine && name !== "br") opened.set(name, depth + (close ? -1 : 1));
    out += escapeHtml(text.slice(last, match.index)) + (fine ? `<${close}${name}${open ? " open" : ""}>` : escapeHtml(whole));
    last = match.index + whole.length;
  }
  return out + escapeHtml(text.slice(last));
}

let openTags = new Map(); // the safe tags open in the rendering under way (renderTokens)

md.use({
  renderer: {
    html(token) {
      const html = safeHtml(token.text, openTags);
      // A block of only literal text keeps its own lines and does not run into the next block.
      const literal = !/<\/?(details|summary|kbd|sup|sub)[ >]/i.test(html);
      return token.block && literal ? `<div class="raw-html">${html}</div>` : html;
    },
    checkbox({ checked }) {
      // A task list's box: shown, not an <input> (forms are not let through the sanitizer).
      const label = checked ? "done" : "to do";
      return `<span class="task-box${checked ? " is-done" : ""}" role="img" aria-label="${label}">${checked ? "☑" : "☐"}</span> `;
    },
    image(token) {
      if (INLINE_IMAGE.test(token.href || "")) return false; // marked's own rendering
      return `<span class="md-image">[image: ${escapeHtml(token.text || token.href || "")}]</span>`;
    },
  },
});

const PURIFY_CONFIG = {
  USE_PROFILES: { html: true }, // no SVG, no MathML
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "option", "iframe",
    "object", "embed", "audio", "video", "source", "track", "link", "meta", "base", "dialog"],
  FORBID_ATTR: ["style", "srcset", "action", "formaction", "ping", "background", "poster"],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: true,
  RETURN_DOM_FRAGMENT: true,
};

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    const href = node.getAttribute("href") || "";
    if (!/^(https?:|mailto:|#)/i.test(href)) node.removeAttribute("href");
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
  if (node.tagName === "IMG") {
    // Only inline images: nothing is fetched because of what a model wrote.
    const src = node.getAttribute("src") || "";
    if (!INLINE_IMAGE.test(src)) node.removeAttribute("src");
  }
});

export function sanitize(html) {
  const fragment = DOMPurify.sanitize(html, PURIFY_CONFIG);
  // A link whose address was refused (javascript:, data:…) is plain text, not a dead link.
  for (const a of fragment.querySelectorAll("a:not([href])")) a.replaceWith(...a.childNodes);
  return fragment;
}

function renderTokens(tokens, links) {
  openTags = new Map();
  const list = tokens.slice();
  list.links = links || {};
  return sanitize(md.parser(list));
}

/** The whole text, rendered at once (history, and a message's final form). */
export function renderMarkdown(text) {
  const tokens = md.lexer(text || "");
  return renderTokens(tokens, tokens.links);
}

export class MarkdownStream {
  /** @param {HTMLElement} el the container the rendered blocks go in */
  constructor(el, text = "") {
    this.el = el;
    this.text = "";
    this.stableLength = 0; // characters of `text` rendered as final blocks
    this.tail = null; // the element holding the growing last block
    this.renders = 0; // how many block renders were done (tests check it stays small)
    this.setText(text);
  }

  /** Render everything again from scratch (a snapshot, or the message's final form). */
  setText(text) {
    this.text = (text || "").replace(/\r\n?/g, "\n");
    this.stableLength = 0;
    this.el.replaceChildren();
    this.tail = document.createElement("div");
    this.tail.className = "md-tail";
    this.el.append(this.tail);
    this._update();
  }

  /** The message is complete: its last block is final too. */
  finish() {
    enhanceCode(this.el);
  }

  append(delta) {
    this.text += delta.replace(/\r\n?/g, "\n");
    this._update();
  }

  _update() {
    const rest = this.text.slice(this.stableLength);
    const tokens = md.lexer(rest);
    let last = tokens.length - 1;
    while (last >= 0 && tokens[last].type === "space") last -= 1;
    const done = tokens.slice(0, Math.max(last, 0));
    const consumed = done.map((t) => t.raw).join("");
    if (done.length && rest.startsWith(consumed)) {
      for (const token of done) {
        if (token.type === "space") continue;
        const block = document.createElement("div");
        block.className = "md-block";
        block.append(renderTokens([token], tokens.links));
        enhanceCode(block); // final: its code gets colours and a copy button now
        this.renders += 1;
        this.el.insertBefore(block, this.tail);
      }
      this.stableLength += consumed.length;
      this.tail.replaceChildren(renderTokens(tokens.slice(done.length), tokens.links));
    } else {
      this.tail.replaceChildren(renderTokens(tokens, tokens.links));
    }
    this.renders += 1;
  }
}
