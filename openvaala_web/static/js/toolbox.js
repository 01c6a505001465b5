// The agent's toolbox in the page: its plan (docs/protocol.md, "Plan"), the diffs of the files a
// tool call changed (a tool_result's `changes`, FileChange), and the MCP servers' state (mcp/list).

import { h } from "./dom.js";
import { TogglePanel } from "./layout.js";

const MARKS = { completed: "✓", in_progress: "▸", pending: "○" };
const STATUS_WORDS = { completed: "done", in_progress: "in progress", pending: "to do" };

// On a narrow screen the plan starts folded to its head (the step in progress), so it does not
// take the transcript's room; its toggle unfolds it. The user's choice is kept across redraws.
const NARROW_PLAN = "(max-width: 760px)";

/** Draw `plan` (or hide the panel when there is none) into `el`. */
export function renderPlan(el, plan) {
  const steps = plan && Array.isArray(plan.steps) ? plan.steps : [];
  el.hidden = steps.length === 0;
  el.replaceChildren();
  if (!steps.length) return;
  if (!el.dataset.folded) el.dataset.folded = String(window.matchMedia(NARROW_PLAN).matches);
  const folded = el.dataset.folded === "true";
  const done = steps.filter((s) => s.status === "completed").length;
  const current = steps.find((s) => s.status === "in_progress");
  const toggle = h(
    "button",
    { type: "button", class: "plan-toggle", "aria-expanded": String(!folded), "aria-controls": "plan-steps" },
    h("span", { class: "plan-title" }, "Plan"),
    h("span", { class: "plan-count" }, `${done}/${steps.length}`),
    folded && current ? h("span", { class: "plan-current" }, current.step) : null,
  );
  toggle.addEventListener("click", () => {
    el.dataset.folded = String(!folded);
    renderPlan(el, plan);
    el.querySelector(".plan-toggle").focus();
  });
  el.append(
    h(
      "div",
      { class: "plan-head" },
      toggle,
      plan.explanation && !folded ? h("span", { class: "plan-explanation" }, plan.explanation) : null,
    ),
    h(
      "ol",
      { class: "plan-steps", id: "plan-steps", hidden: folded },
      steps.map((s) =>
        h(
          "li",
          { class: `plan-step step-${s.status}`, dataset: { status: s.status } },
          h("span", { class: "plan-mark", "aria-hidden": "true" }, MARKS[s.status] || "○"),
          h("span", { class: "plan-text" }, s.step),
          h("span", { class: "sr-only" }, ` (${STATUS_WORDS[s.status] || s.status})`),
        ),
      ),
    ),
  );
}

function lineClass(line) {
  if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff --git")) return "diff-file";
  if (line.startsWith("+")) return "diff-add";
  if (line.startsWith("-")) return "diff-del";
  if (line.startsWith("@@")) return "diff-hunk";
  return "diff-ctx";
}

const KIND_WORDS = { add: "added", update: "changed", delete: "deleted", move: "moved" };

/** The diffs of a tool_result's `changes`: one block per file, lines styled added/removed. */
export function diffView(changes) {
  return h(
    "div",
    { class: "diffs" },
    changes.map((c) => {
      const name = c.kind === "move" && c.movePath ? `${c.path} → ${c.movePath}` : c.path;
      const lines = String(c.diff || "").replace(/\n$/, "").split("\n");
      return h(
        "details",
        { class: "diff", open: true, dataset: { kind: c.kind } },
        h("summary", { class: "diff-name" }, h("span", { class: `diff-kind kind-${c.kind}` }, KIND_WORDS[c.kind] || c.kind), " ", name),
        h(
          "pre",
          { class: "diff-body" },
          lines.map((line) => h("span", { class: `diff-line ${lineClass(line)}` }, `${line}\n`)),
        ),
      );
    }),
  );
}

function serverLine(s) {
  const tools = Array.isArray(s.tools) ? s.tools : [];
  let text;
  if (s.status === "ready") text = `ready, ${tools.length} tool${tools.length === 1 ? "" : "s"}${tools.length ? `: ${tools.join(", ")}` : ""}`;
  else if (s.status === "failed") text = `failed: ${s.error || "no reason given"}`;
  else if (s.status === "starting") text = "starting…";
  else text = "not started yet (starts when an agent that lists it first needs it)";
  if (s.toolsLastKnown && tools.length) text += `; offers the ${tools.length} tool${tools.length === 1 ? "" : "s"} it listed last`;
  return h(
    "li",
    { class: `mcp-server mcp-${s.status}`, dataset: { name: s.name, status: s.status } },
    h("span", { class: "mcp-name" }, s.name),
    " ",
    h("span", { class: "mcp-state" }, text),
  );
}

/** The MCP servers panel: a button in the sidebar opens it; it reads mcp/list when opened and
 * then follows mcp/statusChanged (docs/protocol.md), so an open panel shows each change live. */
export class McpPanel extends TogglePanel {
  constructor(el, button, request) {
    super(el, button);
    this.request = request;
    this.servers = null; // as last read or told; null until the panel was opened
  }

  async refresh() {
    try {
      this.servers = (await this.request("mcp/list", {})).servers || [];
    } catch (err) {
      this.el.replaceChildren(h("p", { class: "mcp-error" }, `Could not read the MCP servers: ${err.message || err}`));
      return;
    }
    this.render();
  }

  /** One server's new state (mcp/statusChanged's params). */
  changed(state) {
    if (!this.servers || !state || !state.name) return;
    const at = this.servers.findIndex((s) => s.name === state.name);
    if (state.status === "removed") {
      if (at >= 0) this.servers.splice(at, 1); // a reload took it out of the config
    } else if (at >= 0) this.servers[at] = state;
    else this.servers.push(state);
    if (!this.el.hidden) this.render();
  }

  render() {
    const servers = this.servers || [];
    const refresh = h("button", { type: "button", class: "mcp-refresh", onclick: () => this.refresh() }, "Refresh");
    this.el.replaceChildren(
      h("div", { class: "mcp-head" }, h("span", {}, "MCP servers"), refresh),
      servers.length
        ? h("ul", { class: "mcp-list" }, servers.map(serverLine))
        : h("p", { class: "mcp-none" }, "None configured ([mcp_servers.NAME] in config.toml)."),
    );
  }
}
