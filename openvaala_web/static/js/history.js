// Checkpoints, the conversation tree and bundles in the web UI (docs/protocol.md: conversation/
// rewind with restoreFiles, conversation/undo, conversation/tree, turn/resume, and the bundle
// routes api/conversations/<id>/export and api/import, relative: the app's path, docs/security.md).
//
// A "History" button in the conversation header opens a panel: the tree of forks and rewinds
// (click one to open it), "Undo file changes", "Continue the cut turn", "Download bundle" and
// "Import bundle". Restart-from-here asks whether to restore files when turns changed some, and
// asks again before overwriting files the user changed since.

import { $, h } from "./dom.js";

function shortList(paths) {
  const shown = paths.slice(0, 8).join(", ");
  return paths.length > 8 ? `${shown} and ${paths.length - 8} more` : shown;
}

/** The sentence for turns a restore could not put back (`missingTurnIds`), or "" (the TUI and the
 * editor bridge say the same: openvaala_server/client/restore_note.py). */
export function missingNote(files) {
  const missing = (files && files.missingTurnIds) || [];
  if (!missing.length) return "";
  const turns = missing.length === 1 ? "1 turn" : `${missing.length} turns`;
  return (
    `The file changes of ${turns} could not be restored and were left as they are: their ` +
    "snapshots are gone (the conversation they came from is not in this data directory, " +
    "or they were dropped to stay within [checkpoints] max_mb)."
  );
}

/** The sentence for files a restore leaves as they are because the checkpoints could not keep
 * them (too large: `skipped`), or "" (openvaala_server/client/restore_note.py says the same). */
export function skippedNote(paths) {
  if (!paths || !paths.length) return "";
  const one = paths.length === 1;
  const left = one ? "it is" : "they are";
  return `${shortList(paths)} ${one ? "was" : "were"} too large to keep in a checkpoint ` +
    `([checkpoints] max_file_mb): ${left} left as ${left}.`;
}

/** The paths a restore's result left as they are (`skipped`). */
function resultSkipped(files) {
  return ((files && files.skipped) || []).map((s) => s.path);
}

/** Every note a restore's result calls for, joined ("" when none). */
export function restoreNotes(files) {
  return [missingNote(files), skippedNote(resultSkipped(files))].filter(Boolean).join(" ");
}

export class HistoryPanel {
  /** app: {rpc, openId, openConversation(id), showError(msg, kind), refreshList(), setComposer(text)} */
  constructor(app) {
    this.app = app;
    this.button = h("button", { type: "button", id: "history-open", disabled: true,
      "aria-controls": "history-panel", "aria-expanded": "false",
      title: "Forks and rewinds, undo file changes, export and import",
      onclick: () => this.toggle() }, "History");
    const actions = document.querySelector("#actions-list");
    if (actions) actions.prepend(this.button);
    this.panel = h("section", { id: "history-panel", "aria-label": "History", hidden: true });
    this.cut = false;
    // Kept across redraws: what the last action did stays on screen when the panel redraws.
    this.status = h("p", { class: "history-status", role: "status" });
    // Renders are async (two requests each) and a conversation can be opened while one is on its
    // way: only the latest render draws, or a slower one could draw the previous conversation's tree.
    this.renders = 0;
    // Kept across redraws too: what the user typed stays, and a redraw made while the opened
    // conversation's state is still coming does not empty it.
    this.importCwd = h("input", { type: "text", id: "history-import-cwd", autocomplete: "off", spellcheck: "false",
      "aria-label": "Working directory for an imported conversation",
      oninput: () => { this.cwdEdited = true; } });
    this.cwdFor = null;
    this.cwdEdited = false;
    const settings = $("#settings");
    settings.parentNode.insertBefore(this.panel, settings.nextSibling);
  }

  /** Whether the open conversation's last turn was cut (Continue is offered only then). */
  setCut(cut) {
    if (this.cut === cut) return;
    this.cut = cut;
    const button = this.panel.querySelector("#history-continue");
    if (button) button.disabled = !cut;
  }

  setConversation(conversationId) {
    this.button.disabled = !conversationId;
    if (!this.panel.hidden) this.render();
  }

  toggle() {
    this.panel.hidden = !this.panel.hidden;
    this.button.setAttribute("aria-expanded", String(!this.panel.hidden));
    if (!this.panel.hidden) this.render();
  }

  async request(method, params) {
    return this.app.rpc.request(method, params);
  }

  async render() {
    const cid = this.app.openId;
    if (!cid) return;
    const render = ++this.renders;
    const [tree, report] = await Promise.all([
      this.request("conversation/tree", { conversationId: cid }).catch(() => null),
      this.request("conversation/checkpoints", { conversationId: cid }).catch(() => null),
    ]);
    if (render !== this.renders || cid !== this.app.openId) return;
    this.fillImportCwd(cid);
    const status = this.status;
    // Turns a fork copied from its parent (fromConversationId) are undone by a rewind, not by undo.
    const pending = report ? report.turns.filter((t) => !t.restored && !t.fromConversationId) : [];
    // An import works in the directory given here, never in the one its bundle names
    // (docs/security.md, "Checkpoints and bundles"): the open conversation's, to edit.
    const importCwd = this.importCwd;
    const importInput = h("input", { type: "file", id: "history-import-file", accept: ".tar,application/x-tar",
      "aria-label": "Bundle file to import", onchange: () => this.importFile(importInput, importCwd, status) });
    this.panel.replaceChildren(
      h("h2", {}, "History"),
      h("div", { class: "history-actions" },
        h("button", { type: "button", id: "history-undo", disabled: pending.length === 0,
          onclick: () => this.undo(status) }, "Undo file changes"),
        h("button", { type: "button", id: "history-continue", disabled: !this.cut, title: "Only after a crash cut a turn",
          onclick: () => this.resume(status) }, "Continue the cut turn"),
        h("a", { id: "history-export", href: `api/conversations/${encodeURIComponent(cid)}/export`, download: `${cid}.openvaala.tar` },
          "Download bundle"),
        h("label", { for: "history-import-cwd" }, "Import into"), importCwd,
        h("label", { for: "history-import-file" }, "Import bundle"), importInput),
      status,
      report ? h("p", { class: "history-space" },
        `Snapshots: ${(report.bytes / 1e6).toFixed(1)} MB of ${(report.limitBytes / 1e6).toFixed(0)} MB; ` +
        `${pending.length} turn(s) with file changes to undo.`) : null,
      tree ? h("ul", { id: "history-tree", class: "history-tree" }, this.node(tree.root, cid)) : null,
    );
  }

  /** The import's directory: the open conversation's, unless the user typed one for it. Left as
   * it is while the conversation's state has not come yet (its cwd is not known). */
  fillImportCwd(cid) {
    const cwd = this.app.openCwd;
    if (!cwd || (this.cwdFor === cid && this.cwdEdited)) return;
    this.importCwd.value = cwd;
    this.cwdFor = cid;
    this.cwdEdited = false;
  }

  node(node, current) {
    const kind = node.kind === "root" ? "" : ` · ${node.kind}`;
    const gone = node.parentMissing ? " · its parent is not here" : "";
    const label = `${node.title || "Untitled"}${kind}${gone}`;
    const entry = node.conversationId === current
      ? h("span", { class: "history-current", "aria-current": "true" }, label)
      : h("a", { href: `#${node.conversationId}`, dataset: { conversationId: node.conversationId },
        onclick: (event) => { event.preventDefault(); this.app.openConversation(node.conversationId); } }, label);
    const children = (node.children || []).map((child) => this.node(child, current));
    return h("li", { dataset: { kind: node.kind } }, entry, children.length ? h("ul", {}, children) : null);
  }

  /** Call a restoring method; on files_conflict ask before overwriting. Null when declined. */
  async withConflicts(method, params) {
    try {
      return await this.request(method, params);
    } catch (err) {
      if (err.kind !== "files_conflict") throw err;
      const paths = ((err.data && err.data.conflicts) || []).map((c) => c.path);
      if (!window.confirm(`Changed since the agent wrote them: ${shortList(paths)}. Overwrite them too?`)) {
        return null;
      }
      return this.request(method, { ...params, force: true });
    }
  }

  async undo(status) {
    try {
      const result = await this.withConflicts("conversation/undo", { conversationId: this.app.openId });
      const missing = restoreNotes(result);
      status.textContent = result
        ? `Undone: ${result.restored.length ? shortList(result.restored) : "nothing was put back on disk"}.` +
          (missing ? ` ${missing}` : "")
        : "Nothing was restored: your changes are kept.";
    } catch (err) {
      status.textContent = err.kind === "not_found" ? "Nothing to undo." : `Undo failed: ${err.message}`;
    }
    this.render().catch(() => {});
  }

  async resume(status) {
    try {
      await this.request("turn/resume", { conversationId: this.app.openId });
      status.textContent = "The cut turn continues.";
    } catch (err) {
      status.textContent = err.kind === "not_idle" ? "No turn was cut here: nothing to continue." : `Continue failed: ${err.message}`;
    }
  }

  async importFile(input, cwdInput, status, onConflict = "ask") {
    const file = input.files && input.files[0];
    if (!file) return;
    const cwd = cwdInput.value.trim();
    if (!cwd) {
      status.textContent = "Give the working directory the imported conversation works in, then choose the file again.";
      input.value = "";
      return;
    }
    const query = `onConflict=${encodeURIComponent(onConflict)}&cwd=${encodeURIComponent(cwd)}`;
    const response = await fetch(`api/import?${query}`, {
      method: "POST", body: file, credentials: "same-origin",
      headers: { "Content-Type": "application/x-tar" },
    });
    const body = await response.json().catch(() => ({}));
    if (response.status === 409) {
      const keep = window.confirm("This conversation is already here. Keep both (OK) or skip (Cancel)?");
      return this.importFile(input, cwdInput, status, keep ? "keep-both" : "skip");
    }
    if (!response.ok) {
      status.textContent = `Import refused: ${(body.error && body.error.message) || response.statusText}`;
      return;
    }
    input.value = "";
    this.app.refreshList();
    if (body.conversationId) {
      // Grants a bundle carried are never trusted (docs/security.md): say how many were dropped.
      const dropped = body.grantsDropped || 0;
      const reset = body.agentsReset || 0;
      status.textContent = `Imported, working in ${body.cwd}.`
        + (dropped ? ` ${dropped} "allow for this conversation" grant(s) it carried were dropped: those calls ask again.` : "")
        + (reset ? ` ${reset} agent(s) it named would have had more than the default agent: the default agent runs instead.` : "");
      await this.app.openConversation(body.conversationId);
    } else {
      status.textContent = "Skipped: it is already here.";
    }
  }

  /** Restart from here (a rewind), asking whether to restore the files too. */
  async rewind(item, conversationState) {
    const cid = this.app.openId;
    const params = { conversationId: cid, messageId: item.itemId };
    const since = await this.filesSince(item, conversationState);
    const note = skippedNote(since.skipped);
    const question = `Also restore the files the agent changed since then? ${shortList(since.paths)}` +
      (note ? ` (${note})` : "");
    if ((since.paths.length || since.skipped.length) && window.confirm(question)) {
      params.restoreFiles = true;
    }
    try {
      const result = await this.withConflicts("conversation/rewind", params);
      const missing = restoreNotes(result && result.files);
      if (missing) this.app.showError(missing, "info");
      return result;
    } catch (err) {
      this.app.showError(`Restart from here failed: ${err.message}`, err.kind);
      return null;
    }
  }

  async filesSince(item, rootItems) {
    const items = rootItems || [];
    const index = items.findIndex((i) => i.itemId === item.itemId);
    const earlier = new Set(items.slice(0, index < 0 ? 0 : index).map((i) => i.turnId));
    earlier.delete(item.turnId);
    const report = await this.request("conversation/checkpoints", { conversationId: this.app.openId }).catch(() => null);
    const paths = new Set();
    const skipped = new Set();
    for (const turn of (report && report.turns) || []) {
      if (turn.restored || earlier.has(turn.turnId)) continue;
      for (const f of turn.files || []) paths.add(f.path);
      for (const f of turn.skipped || []) skipped.add(f.path);
    }
    return { paths: [...paths].filter((p) => !skipped.has(p)).sort(), skipped: [...skipped].sort() };
  }
}
