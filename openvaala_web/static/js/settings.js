// The conversation's agent and working directory (docs/protocol.md, conversation/setAgent and
// conversation/setCwd). When either is gone (a config edit, a moved directory) the daemon refuses
// to run the conversation: this panel says why and offers the way out — a picker of the configured
// agents, a field for another directory. The header's "Agent" button opens the same picker any
// time. Both are refused while a turn runs; the daemon's error is shown then.

import { h } from "./dom.js";

export class SettingsPanel {
  /**
   * @param {HTMLElement} root
   * @param {{agents: () => Promise<Array<{name: string, description: string, default: boolean}>>,
   *   setAgent: (agent: string) => Promise<boolean>, setCwd: (cwd: string) => Promise<boolean>}} actions
   */
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
    this.conversationId = null;
    this.choosing = false; // the picker was opened by hand (the agent itself is configured)
    this.agentNote = h("p", { class: "settings-note", id: "agent-missing-note" });
    this.agentSelect = h("select", { id: "agent-select", "aria-label": "Agent" });
    this.agentForm = h(
      "form",
      { id: "agent-form", class: "settings-form", hidden: true },
      this.agentNote,
      h("div", { class: "form-row" },
        this.agentSelect,
        h("button", { type: "submit", id: "agent-use" }, "Use this agent"),
        h("button", { type: "button", id: "agent-cancel", onclick: () => this.closePicker() }, "Cancel")),
    );
    this.agentForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const agent = this.agentSelect.value;
      // The daemon's conversation/updated came before its answer: redraw once the picker is done.
      if (agent && (await this.actions.setAgent(agent))) this.closePicker();
    });
    this.cwdNote = h("p", { class: "settings-note", id: "cwd-missing-note" });
    this.cwdInput = h("input", {
      id: "cwd-input", type: "text", autocomplete: "off", spellcheck: "false",
      placeholder: "/absolute/path", "aria-label": "New working directory",
    });
    this.cwdForm = h(
      "form",
      { id: "cwd-form", class: "settings-form", hidden: true },
      this.cwdNote,
      h("div", { class: "form-row" }, this.cwdInput, h("button", { type: "submit", id: "cwd-use" }, "Use this directory")),
    );
    this.cwdForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const cwd = this.cwdInput.value.trim();
      if (cwd) await this.actions.setCwd(cwd);
    });
    // The model of the main agent (conversation/setModel), changed any time from the header.
    this.choosingModel = false;
    this.modelSelect = h("select", { id: "model-select", "aria-label": "Model" });
    // The list is fetched each time the picker opens, while the previous one is already shown:
    // a choice made before the answer comes must survive it.
    this.modelChosen = false;
    this.modelSelect.addEventListener("change", () => { this.modelChosen = true; });
    this.modelForm = h(
      "form",
      { id: "model-form", class: "settings-form", hidden: true, dataset: { missing: "false" } },
      h("p", { class: "settings-note" }, "Choose the model the main agent uses from its next call on."),
      h("div", { class: "form-row" },
        this.modelSelect,
        h("button", { type: "submit", id: "model-use" }, "Use this model"),
        h("button", { type: "button", id: "model-cancel", onclick: () => this.closeModelPicker() }, "Cancel")),
    );
    this.modelForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const model = this.modelSelect.value;
      if (model && this.actions.setModel && (await this.actions.setModel(model))) this.closeModelPicker();
    });
    this.root.replaceChildren(this.agentForm, this.modelForm, this.cwdForm);
  }

  /** Open the model picker (the header's model button). */
  async openModelPicker() {
    this.choosingModel = true;
    this.modelChosen = false;
    this.render(this.conv);
    await this.fillModels(this.conv ? this.conv.model : null);
    this.modelSelect.focus();
  }

  closeModelPicker() {
    const inside = this.modelForm.contains(document.activeElement);
    this.choosingModel = false;
    this.render(this.conv);
    if (inside) document.getElementById("change-model")?.focus();
  }

  async fillModels(current) {
    let models = [];
    try {
      models = this.actions.models ? await this.actions.models() : [];
    } catch {
      models = [];
    }
    const wanted = this.modelChosen ? this.modelSelect.value : current;
    this.modelSelect.replaceChildren(...models.map((m) => h("option", { value: m.name }, m.name)));
    if (models.some((m) => m.name === wanted)) this.modelSelect.value = wanted;
  }

  /** Open the agent picker by hand (the header's Agent button). */
  openPicker() {
    this.choosing = true;
    this.render(this.conv);
    this.agentSelect.focus();
  }

  closePicker() {
    this.choosing = false;
    this.render(this.conv);
  }

  /** Show what the conversation needs (nothing, most of the time). */
  render(conv) {
    if (!conv || conv.conversationId !== this.conversationId) {
      this.choosing = false;
      this.choosingModel = false;
      this.cwdInput.value = "";
      this.conversationId = conv ? conv.conversationId : null;
    }
    this.conv = conv;
    const agentMissing = Boolean(conv) && conv.agentAvailable === false;
    const showPicker = Boolean(conv) && (agentMissing || this.choosing);
    if (showPicker && this.agentForm.hidden) this.fillAgents(conv.agent);
    this.agentForm.hidden = !showPicker;
    this.agentForm.dataset.missing = String(agentMissing);
    this.agentNote.textContent = agentMissing
      ? `The agent "${conv.agent}" is not configured on this machine: choose another to continue.`
      : "Choose the agent of this conversation (its instructions and tools).";
    $cancel(this.agentForm).hidden = agentMissing;
    const cwdMissing = Boolean(conv) && conv.cwdExists === false;
    this.cwdForm.hidden = !cwdMissing;
    if (cwdMissing) {
      this.cwdNote.textContent = `The working directory ${conv.cwd} no longer exists: point the conversation at another one.`;
    }
    this.modelForm.hidden = !(conv && this.choosingModel);
    this.root.hidden = !showPicker && !cwdMissing && this.modelForm.hidden;
  }

  async fillAgents(current) {
    let agents = [];
    try {
      agents = await this.actions.agents();
    } catch {
      agents = [];
    }
    const options = agents.map((a) =>
      h("option", { value: a.name, selected: a.name === current }, a.description ? `${a.name} — ${a.description}` : a.name));
    this.agentSelect.replaceChildren(...options);
    if (!agents.some((a) => a.name === current)) {
      const fallback = agents.find((a) => a.default) || agents[0];
      if (fallback) this.agentSelect.value = fallback.name;
    }
  }
}

function $cancel(form) {
  return form.querySelector("#agent-cancel");
}
