// Reading aids on rendered messages: syntax highlighting of code blocks (the vendored
// highlight.js, imported the first time a code block is shown so the first paint does not wait
// for it), a copy button on each code block, and copying a whole message.
//
// highlight.js writes its own escaped markup into the <code> element; the text it colours came out
// of DOMPurify as text, so nothing a model wrote becomes markup.

import { h } from "./dom.js";

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

/** Give every finished code block under `root` a copy button and its colours (once each); its
 * tables scroll sideways on a narrow screen, so the keyboard can reach them too. */
export function enhanceCode(root) {
  for (const table of root.querySelectorAll("table:not([tabindex])")) table.tabIndex = 0;
  const blocks = root.querySelectorAll("pre > code");
  for (const code of blocks) {
    const pre = code.parentElement;
    if (pre.parentElement && pre.parentElement.classList.contains("code-block")) continue;
    const lang = /(?:^|\s)language-([\w+#.-]+)/.exec(code.className);
    const button = h("button", { type: "button", class: "copy-code", title: "Copy this code" }, "Copy");
    button.addEventListener("click", () => copyText(code.textContent.replace(/\n$/, ""), button));
    const head = h("div", { class: "code-head" }, h("span", { class: "code-lang" }, lang ? lang[1] : ""), button);
    const wrap = h("div", { class: "code-block" });
    pre.tabIndex = 0; // it scrolls sideways: the keyboard can scroll it too
    pre.replaceWith(wrap);
    wrap.append(head, pre);
    highlight(code, lang ? lang[1] : null);
  }
}

/** Colours for a block tagged with a language highlight.js knows; an untagged block stays plain
 * (guessing the language gave prose and logs random colours). */
function highlight(code, lang) {
  if (!lang) return;
  highlighter()
    .then((hljs) => {
      if (!code.isConnected && !code.closest(".code-block")) return;
      if (!hljs.getLanguage(lang)) return; // "text", "console"…: plain
      hljs.highlightElement(code);
    })
    .catch(() => {}); // without colours, the code still reads
}
