// Reading aids on rendered messages: syntax highlighting of code blocks (the vendored
// highlight.js, imported the first time a code block is shown so the first paint does not wait
// for it), a copy button on each code block, and copying a whole message.
//
// highlight.js writes its own escaped markup into the <code> element; the text it colours came out
// of DOMPurify as text, so nothing a model wrote becomes markup.

import { h } from "./dom.js";

const AUTO_DETECT_MAX = 20_000; // characters: past this, a block without a language stays plain
let loading = null;

function highlighter() {
  if (!loading) loading = import("../vendor/highlight.min.js").then((module) => module.default);
  return loading;
}

/** Copy `text`; the button says whether it worked for a moment. */
export async function copyText(text, button) {
  const label = button.textContent;
  let ok = true;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    ok = false;
  }
  button.textContent = ok ? "Copied" : "Copy failed";
  button.classList.toggle("copied", ok);
  setTimeout(() => {
    button.textContent = label;
    button.classList.remove("copied");
  }, 1500);
}

/** Give every finished code block under `root` a copy button and its colours (once each). */
export function enhanceCode(root) {
  const blocks = root.querySelectorAll("pre > code");
  for (const code of blocks) {
    const pre = code.parentElement;
    if (pre.parentElement && pre.parentElement.classList.contains("code-block")) continue;
    const lang = /(?:^|\s)language-([\w+#.-]+)/.exec(code.className);
    const button = h("button", { type: "button", class: "copy-code", title: "Copy this code" }, "Copy");
    button.addEventListener("click", () => copyText(code.textContent.replace(/\n$/, ""), button));
    const head = h("div", { class: "code-head" }, h("span", { class: "code-lang" }, lang ? lang[1] : ""), button);
    const wrap = h("div", { class: "code-block" });
    pre.replaceWith(wrap);
    wrap.append(head, pre);
    highlight(code, lang ? lang[1] : null);
  }
}

function highlight(code, lang) {
  if (!lang && code.textContent.length > AUTO_DETECT_MAX) return;
  highlighter()
    .then((hljs) => {
      if (!code.isConnected && !code.closest(".code-block")) return;
      if (lang && !hljs.getLanguage(lang)) return; // "text", "console"…: plain
      hljs.highlightElement(code);
    })
    .catch(() => {}); // without colours, the code still reads
}
