// MCP resources and prompts in the composer (docs/protocol.md: mcp/list, mcp/statusChanged,
// mcp/readResource, mcp/getPrompt), as the TUI offers them:
// - "Resources" lists each ready server's resources; picking one puts `@SERVER:URI` in the
//   message, and on send each such mention of a configured server gets the resource's text
//   appended in a fence (the daemon reads it: the browser never talks to a server itself).
// - Typing "/" offers the ready servers' prompts as `/mcp__SERVER__PROMPT name=value …`; sending
//   one sends the server's filled-in prompt as the message instead.
// The servers' state is read once (mcp/list) and then followed through mcp/statusChanged.

import { h } from "./dom.js";

export const PROMPT_PREFIX = "/mcp__";
// `@docs:notes://today` at the start of a word: the server's name, then the URI up to a space.
const MENTION = /(^|\s)@([A-Za-z0-9_-]+):(\S+)/g;

/** Words as a shell splits them: spaces separate, "…" or '…' keep spaces. Throws on an open quote. */
function words(text) {
  const word = /(?:[^\s"']+|"[^"]*"|'[^']*')+/g;
  if (text.replace(word, "").trim()) throw new Error("a quote is not closed");
  return (text.match(word) || []).map((w) => w.replace(/"([^"]*)"|'([^']*)'/g, (_, a, b) => a ?? b));
}

/** `/mcp__SERVER__PROMPT a=1 b="two words"` as {server, name, arguments}; null for other text.
 * Throws an Error saying what is wrong with a malformed one. */
export function parsePromptCommand(text) {
  const t = text.trim();
  if (!t.startsWith(PROMPT_PREFIX)) return null;
  const space = t.search(/\s/);
  const head = space < 0 ? t : t.slice(0, space);
  const rest = space < 0 ? "" : t.slice(space);
  const [server, ...name] = head.slice(PROMPT_PREFIX.length).split("__");
  if (!server || !name.length || !name.join("__")) throw new Error(`${head}: expected /mcp__SERVER__PROMPT`);
  const args = {};
  let split;
  try {
    split = words(rest);
  } catch (err) {
    throw new Error(`${head}: ${err.message}`);
  }
  for (const word of split) {
    const eq = word.indexOf("=");
    if (eq <= 0) throw new Error(`${head}: arguments are name=value, not "${word}"`);
    args[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return { server, name: name.join("__"), arguments: args };
}

/** `content` in a code fence labelled `label`, longer than any backtick run inside it. */
export function fenced(label, content) {
  const longest = Math.max(0, ...(content.match(/`+/g) || []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  const body = content && !content.endsWith("\n") ? `${content}\n` : content;
  return `${fence}${label}\n${body}${fence}`;
}

/** The `server:uri` mentions in `text`, once each, trailing punctuation left out. */
export function mentions(text) {
  const found = new Map();
  for (const m of text.matchAll(MENTION)) {
    const uri = m[3].replace(/[.,;!?)]+$/, "");
    if (uri) found.set(`${m[2]}:${uri}`, { server: m[2], uri });
  }
  return [...found.values()];
}

export class McpPicker {
  /**
   * @param {HTMLFormElement} composer the composer form (the picker puts its button in its row)
   * @param {HTMLTextAreaElement} text its text box
   * @param {(method: string, params: object) => Promise<any>} request a daemon request
   */
  constructor(composer, text, request) {
    this.text = text;
    this.request = request;
    this.servers = new Map(); // name → mcp/list entry, as last read or told
    this.loaded = null; // the first mcp/list read (a promise), once asked for
    this.button = h(
      "button",
      { type: "button", id: "mcp-resources-open", title: "Attach a resource of an MCP server (@SERVER:URI)", "aria-expanded": "false" },
      "Resources",
    );
    this.list = h("ul", { id: "mcp-resources", class: "mcp-pick", hidden: true, "aria-label": "MCP resources" });
    this.menu = h("ul", { id: "mcp-prompts", class: "mcp-pick", hidden: true, "aria-label": "MCP prompts" });
    this.button.addEventListener("click", () => (this.list.hidden ? this.openResources() : this.closeResources()));
    text.addEventListener("input", () => this.renderPrompts());
    text.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        this.menu.hidden = true;
        this.closeResources();
      } else if (event.key === "Tab" && !this.menu.hidden && this.menu.firstElementChild) {
        event.preventDefault(); // completes the first prompt offered
        this.menu.firstElementChild.querySelector("button").click();
      }
    });
    const row = composer.querySelector(".composer-row");
    composer.insertBefore(this.menu, row);
    composer.insertBefore(this.list, row);
    (row || composer).prepend(this.button);
  }

  setEnabled(enabled) {
    this.button.disabled = !enabled;
  }

  /** Read every server's state once (mcp/list): the servers that were ready before this page
   * opened send no mcp/statusChanged until they change. */
  load() {
    this.loaded ??= this.request("mcp/list", {}).then(
      (result) => {
        this.servers = new Map((result.servers || []).map((s) => [s.name, s]));
      },
      () => {
        this.loaded = null; // read again at the next need; changes told meanwhile are kept
      },
    );
    return this.loaded;
  }

  /** Forget every server's state (a reconnection, maybe to a new daemon): read again at the
   * next need. */
  forget() {
    this.loaded = null;
    this.servers = new Map();
    if (!this.list.hidden) this.closeResources();
    this.menu.hidden = true;
  }

  /** One server's new state (mcp/statusChanged's params). */
  changed(state) {
    if (!state || !state.name) return;
    if (state.status === "removed") this.servers.delete(state.name); // a reload took it out
    else this.servers.set(state.name, state);
    if (!this.list.hidden) this.renderResources();
    this.renderPrompts();
  }

  _ready() {
    return [...this.servers.values()].filter((s) => s.status === "ready");
  }

  async openResources() {
    await this.load();
    this.list.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    this.renderResources();
  }

  closeResources() {
    this.list.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
  }

  renderResources() {
    const items = this._ready().flatMap((s) => (s.resources || []).map((r) => ({ server: s.name, ...r })));
    if (!items.length) {
      this.list.replaceChildren(h("li", { class: "mcp-pick-none" }, "No ready MCP server offers resources (a server starts when a turn first needs it)."));
      return;
    }
    this.list.replaceChildren(
      ...items.map((r) =>
        h(
          "li",
          {},
          h(
            "button",
            { type: "button", class: "mcp-resource", dataset: { server: r.server, uri: r.uri }, onclick: () => this.attach(r) },
            h("span", { class: "mcp-pick-name" }, `@${r.server}:${r.uri}`),
            r.name ? h("span", { class: "mcp-pick-help" }, ` ${r.name}`) : null,
          ),
        ),
      ),
    );
  }

  /** Put `@SERVER:URI` in the message at the cursor. */
  attach(resource) {
    const mention = `@${resource.server}:${resource.uri}`;
    const box = this.text;
    const at = box.selectionStart ?? box.value.length;
    const before = box.value.slice(0, at);
    const after = box.value.slice(at);
    const pad = before && !/\s$/.test(before) ? " " : "";
    box.value = `${before}${pad}${mention} ${after.replace(/^\s+/, "")}`;
    this.closeResources();
    box.focus();
  }

  renderPrompts() {
    const typed = this.text.value;
    const open = typed.startsWith("/") && !/\s/.test(typed);
    if (open && !this.loaded) {
      this.load().then(() => this.renderPrompts());
      return;
    }
    const offers = open
      ? this._ready().flatMap((s) =>
          (s.prompts || []).map((p) => ({ command: `${PROMPT_PREFIX}${s.name}__${p.name}`, ...p })),
        ).filter((p) => p.command.startsWith(typed))
      : [];
    this.menu.hidden = !offers.length;
    this.menu.replaceChildren(
      ...offers.map((p) =>
        h(
          "li",
          {},
          h(
            "button",
            {
              type: "button",
              class: "mcp-prompt",
              dataset: { command: p.command },
              onclick: () => {
                const args = (p.arguments || []).map((a) => `${a}=`).join(" ");
                this.text.value = args ? `${p.command} ${args}` : `${p.command} `;
                this.menu.hidden = true;
                this.text.focus();
              },
            },
            h("span", { class: "mcp-pick-name" }, p.command),
            p.description ? h("span", { class: "mcp-pick-help" }, ` ${p.description}`) : null,
          ),
        ),
      ),
    );
  }

  /** What to send for `text`: a prompt command becomes the server's filled-in prompt; each
   * `@SERVER:URI` of a configured server gets its text appended. Throws an Error whose message
   * is for the user (nothing is sent then). */
  async expand(text) {
    this.menu.hidden = true;
    const call = parsePromptCommand(text);
    if (call) {
      const result = await this.request("mcp/getPrompt", call);
      return String(result.text);
    }
    const wanted = mentions(text);
    if (!wanted.length) return text;
    await this.load();
    const blocks = [];
    for (const { server, uri } of wanted) {
      if (!this.servers.has(server)) continue; // an e-mail address, a handle: left as it is
      const result = await this.request("mcp/readResource", { server, uri });
      blocks.push(fenced(`${server}:${uri}`, String(result.text)));
    }
    return blocks.length ? `${text.trimEnd()}\n\n${blocks.join("\n\n")}` : text;
  }
}
