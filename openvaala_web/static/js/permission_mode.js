// The conversation's permission mode (docs/security.md, "Permission modes"): a select in the
// composer's row. It shows the mode the daemon announced (conversation/updated), offers only the
// modes the agent allows (`permissionModes`), and a choice goes to conversation/setPermissionMode;
// a refused one falls back to the mode in force.

import { h } from "./dom.js";

const LABELS = {
  plan: "Plan (read-only)",
  ask: "Ask every write",
  "auto-edit": "Auto-edit",
};

export class PermissionModeSelect {
  /**
   * @param {HTMLElement} row where the select goes (before the send button, when there is one)
   * @param {(mode: string) => Promise<boolean>} setMode
   */
  constructor(row, setMode) {
    this.setMode = setMode;
    this.select = h("select", {
      id: "permission-mode",
      "aria-label": "Permission mode",
      title: "Plan: read-only · Ask: every write asks first · Auto-edit: the agent's configuration",
      hidden: true,
    });
    this.current = null;
    this.select.addEventListener("change", async () => {
      const mode = this.select.value;
      if (mode !== this.current && !(await this.setMode(mode))) this.select.value = this.current || "";
    });
    const send = row.querySelector("#send");
    row.insertBefore(this.select, send && send.parentElement === row ? send : null);
  }

  /** @param {{permissionMode?: string, permissionModes?: string[]} | null} conv */
  render(conv) {
    const modes = conv && Array.isArray(conv.permissionModes) ? conv.permissionModes : [];
    this.select.hidden = !conv || !conv.permissionMode || !modes.length;
    if (this.select.hidden) return;
    const shown = [...this.select.options].map((o) => o.value).join(",");
    if (shown !== modes.join(",")) {
      this.select.replaceChildren(...modes.map((m) => h("option", { value: m }, LABELS[m] || m)));
    }
    this.current = conv.permissionMode;
    this.select.value = conv.permissionMode;
  }
}
