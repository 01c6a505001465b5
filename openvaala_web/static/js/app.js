// The app: wires the connection, the conversation state and the views together.
//
// One conversation is open (subscribed) at a time. Its notifications go through state.apply,
// which drops what was already seen and reports gaps; the views redraw only what changed.
// After a reconnection the open conversation is resubscribed with `afterSeq`, so the daemon
// replays exactly what was missed (or sends a fresh snapshot when it no longer holds it).

import { AgentsView } from "./agents.js";
import { announce, spoken } from "./announce.js";
import { outcomeText } from "./approvals.js";
import { Composer } from "./composer.js";
import { ConfigStatus } from "./config_status.js";
import { ContextPanel } from "./context.js";
import { ActionsMenu } from "./header_menu.js";
import { showMachine } from "./machine.js";
import { HistoryPanel } from "./history.js";
import { $, h } from "./dom.js";
import { bindSkipLink, bindTabs, Drawer, EscapeStack, markTab } from "./layout.js";
import { MemoryPanel, parseCommand } from "./memory.js";
import { PermissionModeSelect } from "./permission_mode.js";
import { expandCustom } from "./custom_commands.js";
import { Connection } from "./rpc.js";
import { SettingsPanel } from "./settings.js";
import { SessionsPanel } from "./sessions.js";
import { StartDir } from "./start_dir.js";
import { Sidebar } from "./sidebar.js";
import * as S from "./state.js";
import { McpPanel, renderPlan } from "./toolbox.js";
import { bindTouchActions } from "./touch_actions.js";
import { TranscriptView } from "./transcript.js";

const PROTOCOL_VERSION = 1;
const ERROR_SHOW_MS = 10_000;
// Earlier history read per conversation/read when the user scrolls up: big pages, since a round
// trip costs far more than the items (bench/web.py: 2,000 items reached in 20 reads took 5-7 s).
const HISTORY_PAGE = 1000;

const FRIENDLY = {
  not_idle: "is not possible now: something is running or waiting. Stop it or let it finish first",
  agent_missing: "is not possible: that agent is not configured on this machine. Choose another one above",
  turn_running: "is not possible while a turn runs. Stop it or let it finish first",
};

class App {
  constructor() {
    this.state = null; // S.fromSnapshot(...) of the open conversation
    this.openId = null;
    this.followed = null; // sessionId shown in the transcript (null: the root agent)
    this.subscribing = 0; // generation of the subscribe in flight (0: none)
    this.tab = "transcript";
    this.loadingMore = false;
    this.stats = { applied: 0, stale: 0, gaps: 0, snapshots: 0, replayed: 0 };

    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    this.rpc = new Connection({
      // The app and its websocket live under the daemon's app path (docs/security.md).
      url: `${scheme}//${location.host}${location.pathname.replace(/[^/]*$/, "")}ws`,
      initializeParams: { clientInfo: { name: "openvaala-web", version: "0.1.0" }, protocolVersion: PROTOCOL_VERSION },
      onNotification: (note) => this.onNotification(note),
      onState: (state) => this.onConnectionState(state),
      onOnline: (init) => this.onOnline(init),
    });
    this.configStatus = new ConfigStatus($("#config-status"));

    this.sidebar = new Sidebar($("#sidebar"), {
      list: (opts) => this.rpc.request("conversation/list", opts),
      create: (opts) => this.createConversation(opts),
      open: async (id, find) => {
        await this.openConversation(id);
        if (find && this.state && this.openId === id) await this.jumpToText(find);
      },
      directories: (path) => this.rpc.request("directories/list", { path }),
      choices: async () => {
        const [agents, models] = await Promise.all([this.rpc.request("agents/list", {}), this.rpc.request("models/list", {})]);
        return { agents: agents.agents, models: models.models };
      },
    });
    this.transcript = new TranscriptView($("#transcript"), {
      onAction: (action, item) => this.itemAction(action, item),
      onLoadMore: () => this.loadMore(),
      onApprove: (approval, decision, message) => this.respondApproval(approval, decision, message),
    });
    bindTouchActions($("#transcript"));
    this.composer = new Composer($("#composer"), {
      send: (text, mode, images) => this.send(text, mode, images),
      stop: () => this.call("turn/interrupt", { conversationId: this.openId, ...this.sessionParam() }, "Stop"),
      compact: () => this.compact(),
      edit: (inputId, text) => this.call("input/edit", { inputId, text }, "Edit"),
      withdraw: async (inputId) => {
        const result = await this.call("input/withdraw", { inputId }, "Withdraw");
        if (result && result.images) this.composer.attachments.restore(result.images);
        return result ? result.text : null;
      },
      steer: (inputId) => this.call("input/steer", { inputId }, "Hand to turn"),
      jump: (inputId) => this.call("input/jump", { inputId }, "Jump"),
      redraw: () => this.renderComposer(),
      warn: (message) => this.showError(message, "info"),
      request: (method, params) => this.rpc.request(method, params),
    });
    this.startDir = new StartDir((path) => this.rpc.request("directories/list", { path }), () => this.sidebar.recentDirs());
    this.context = new ContextPanel(this);
    this.memory = new MemoryPanel(this);
    this.agents = new AgentsView($("#agents"), {
      follow: (sessionId) => this.follow(sessionId),
      interrupt: (sessionId) => this.call("turn/interrupt", { conversationId: this.openId, ...this.sessionArg(sessionId) }, "Interrupt"),
      message: async (sessionId, text) => {
        const params = { conversationId: this.openId, ...this.sessionArg(sessionId), text, mode: "steer" };
        return Boolean(await this.call("input/send", params, "Message"));
      },
    });
    this.settings = new SettingsPanel($("#settings"), {
      agents: async () => (await this.rpc.request("agents/list", {})).agents,
      models: async () => (await this.rpc.request("models/list", {})).models,
      setModel: async (model) => Boolean(await this.call("conversation/setModel", { conversationId: this.openId, model }, "Changing the model")),
      setAgent: async (agent) => Boolean(await this.call("conversation/setAgent", { conversationId: this.openId, agent }, "Changing the agent")),
      setCwd: async (cwd) => Boolean(await this.call("conversation/setCwd", { conversationId: this.openId, cwd }, "Changing the directory")),
    });
    this.permissionMode = new PermissionModeSelect($("#composer .composer-row") || $("#composer"), async (mode) =>
      Boolean(await this.call("conversation/setPermissionMode", { conversationId: this.openId, mode }, "Changing the permission mode")));
    const owner = this;
    this.history = new HistoryPanel({
      rpc: this.rpc,
      get openId() { return owner.openId; },
      get openCwd() { return owner.state ? owner.state.conversation.cwd : ""; },
      openConversation: (id) => this.openConversation(id),
      showError: (message, kind) => this.showError(message, kind),
      refreshList: () => this.sidebar.refresh(),
    });
    this.mcp = new McpPanel($("#mcp-panel"), $("#mcp-open"), (method, params) => this.rpc.request(method, params));
    this.sessions = new SessionsPanel($("#sessions-panel"), $("#sessions-open"));
    $("#sign-out").addEventListener("click", () => this.sessions.signOut());
    this.drawer = new Drawer();
    bindSkipLink();
    this.escape = new EscapeStack(this.drawer);
    // The pickers first: Escape in the New form's picker closes the picker, not the form.
    this.escape.add($("#new-picker"), () => this.sidebar.picker && this.sidebar.picker.close());
    this.escape.add($("#dir-picker"), () => this.startDir.picker.close());
    this.escape.add($("#new-form"), () => this.sidebar.closeForm());
    this.escape.add($("#agent-form"), () => this.settings.closePicker());
    this.actionsMenu = new ActionsMenu(this.escape);
    this.bindHeader();
    this.transcript.clear("Type a message to start a conversation, or pick one.");
    this.renderHeader();
  }

  start() {
    this.rpc.start();
    window.addEventListener("hashchange", () => {
      const id = location.hash.slice(1);
      if (id && id !== this.openId) this.openConversation(id);
    });
  }

  // -- connection ------------------------------------------------------------------------

  onConnectionState(state) {
    const banner = $("#banner");
    document.body.dataset.connection = state;
    if (state === "online") {
      banner.hidden = true;
      banner.textContent = "";
    } else if (state === "unauthorized") {
      banner.hidden = false;
      banner.textContent = "Signed out: this browser session ended (expired, or `openvaala web --logout-all`). Run `openvaala web` to sign in again.";
    } else {
      banner.hidden = false;
      banner.textContent = state === "connecting" ? "Connecting to the daemon…" : "Offline: the connection to the daemon dropped. Reconnecting…";
    }
    // With no conversation open the box is ready too: the first message starts one (start_dir.js).
    this.composer.setEnabled(state === "online" && (Boolean(this.state) || !this.openId));
    if (state === "online" && this.state) this.renderComposer();
  }

  async onOnline(init) {
    this.configStatus.show(init && init.config, { atConnect: true });
    showMachine(init); // a daemon restarted elsewhere (web --remote forwards again) says so
    // The MCP servers may have changed while the socket was down (a restart with another
    // configuration, or a daemon that died and told nobody): read them again at the next need.
    this.composer.mcp.forget();
    if (!this.mcp.el.hidden) this.mcp.refresh();
    // The live list (docs/protocol.md, conversation/watchList): watched first, then listed, so
    // no change falls between the two.
    this.rpc.request("conversation/watchList", {}).catch(() => {});
    this.sidebar.refresh().then(() => this.startDir.render());
    this.startDir.load().then(() => {
      this.sidebar.home = this.startDir.home;
    });
    if (this.openId) await this.subscribe(this.openId, { resume: true });
    else if (location.hash.length > 1) await this.openConversation(location.hash.slice(1));
  }

  // -- subscription ----------------------------------------------------------------------

  async subscribe(conversationId, { resume = false } = {}) {
    const generation = Date.now() + Math.random();
    this.subscribing = generation;
    const params = { conversationId };
    const resuming = resume && this.state && this.state.conversationId === conversationId;
    if (resuming) params.afterSeq = this.state.seq;
    let result;
    try {
      result = await this.rpc.request("conversation/subscribe", params);
    } catch (err) {
      if (this.subscribing === generation) this.subscribing = 0;
      if (err.kind === "offline") return; // resubscribed when back online
      this.showError(`Could not open the conversation: ${err.message}`);
      if (err.kind === "not_found") this.closeConversation("That conversation does not exist (any more).");
      return;
    }
    if (this.subscribing !== generation || this.openId !== conversationId) return;
    this.subscribing = 0;
    if (result.snapshot) {
      this.stats.snapshots += 1;
      // A resubscription's snapshot keeps the reply a crashed daemon was streaming.
      this.state = S.fromSnapshot(result.snapshot, result.seq, resuming ? this.state : null);
      if (this.followed && !this.state.sessions.has(this.followed)) this.followed = null;
      this.renderAll();
    } else {
      this.stats.replayed += result.replayed || 0;
    }
    this.publishStats();
    this.composer.setEnabled(true);
    this.renderComposer();
  }

  onNotification(note) {
    if (note.method === "conversation/listChanged") {
      const p = note.params || {};
      if (p.deleted) this.sidebar.removed(p.conversationId);
      else if (p.conversation) this.sidebar.changed(p.conversation);
      return;
    }
    if (note.method === "mcp/statusChanged") {
      this.mcp.changed(note.params); // the whole daemon's: no conversation
      this.composer.mcp.changed(note.params);
      return;
    }
    if (note.method === "config/error" || note.method === "config/reloaded") {
      this.configStatus.show(note.params); // the whole daemon's: no conversation
      return;
    }
    const state = this.state;
    const p = note.params;
    if (!state || !p || p.conversationId !== state.conversationId) return;
    const { status, changes } = S.apply(state, note);
    if (status === "stale") {
      this.stats.stale += 1;
      this.publishStats();
      return;
    }
    if (status === "gap") {
      // Events were lost: ask for exactly those (unless a resubscription is already on it).
      if (!this.subscribing) {
        this.stats.gaps += 1;
        this.publishStats();
        this.subscribe(state.conversationId, { resume: true });
      }
      return;
    }
    if (status !== "applied") return;
    this.stats.applied += 1;
    document.body.dataset.seq = String(state.seq);
    this.publishStats();
    this.renderChanges(changes);
  }

  renderChanges(changes) {
    let composer = false;
    let agents = false;
    const approvals = [];
    const viewed = this.viewedSessionId();
    for (const change of changes) {
      const words = spoken(change, this.state, viewed);
      if (words) this.announce(words);
      switch (change.type) {
        case "approval":
          approvals.push(change.approvalId);
          composer = true;
          agents = true;
          break;
        case "conversation":
          this.renderHeader();
          this.sidebar.updated(this.state.conversation);
          break;
        case "deleted":
          this.sidebar.removed(this.state.conversationId);
          this.closeConversation("This conversation was deleted.");
          return;
        case "itemAdded":
        case "itemUpdated":
        case "itemDelta":
        case "itemRemoved":
          if (change.sessionId === this.viewedSessionId()) this.transcript.apply(change);
          break;
        case "plan":
          this.renderPlan();
          break;
        case "pins":
          this.context.renderPins();
          break;
        case "retry":
        case "compaction":
          this.renderActivity();
          composer = true;
          break;
        default:
          composer = true;
          agents = true;
      }
    }
    if (composer) {
      this.renderComposer();
      this.renderActivity();
    }
    if (agents) this.renderAgents();
    for (const approvalId of approvals) this.approvalChanged(approvalId);
  }

  /** An approval was asked for or answered: say so (only that), and offer the card the focus. */
  approvalChanged(approvalId) {
    const approval = this.state.approvals.get(approvalId);
    if (!approval) return;
    if (approval.decision) {
      this.announce(`${outcomeText(approval)}: ${approval.tool || "tool"}`);
      return;
    }
    this.announce(`${approval.agent || "The agent"} waits for your approval to run ${approval.tool || "a tool"}`);
    this.focusApproval(approvalId);
  }

  /**
   * Move focus to a pending approval card, unless that would take it from the user: focus
   * already on another pending card, or in a text field that holds text (someone is typing;
   * an empty composer, as after sending, is fair game). The card itself takes the focus, not
   * its buttons, so a keystroke meant for the composer can never answer it.
   */
  focusApproval(approvalId) {
    const approval = this.state && this.state.approvals.get(approvalId);
    if (!approval || approval.decision || this.tab !== "transcript") return;
    if (this.composer.sending) {
      // The message that started this turn may still be in the composer: decide once it left.
      const again = () => this.focusApproval(approvalId);
      this.composer.sending.then(again, again);
      return;
    }
    const active = document.activeElement;
    if (active && active !== document.body) {
      if (active.closest(".approval-pending")) return;
      const editable = active.matches("input, textarea, select, [contenteditable='true']");
      if (editable && (active.isContentEditable ? active.textContent : active.value)) return;
    }
    this.transcript.focusItem(S.approvalItemId(approvalId));
  }

  /** The first pending approval shown in the transcript (after a snapshot redraw). */
  focusFirstApproval() {
    const session = S.session(this.state, this.viewedSessionId());
    const shown = S.pendingApprovals(this.state).find((a) => session && session.byId.has(S.approvalItemId(a.approvalId)));
    if (shown) this.focusApproval(shown.approvalId);
  }

  /** Tell assistive technology about a status change, and nothing else (a polite live region). */
  announce(text) {
    announce(text);
  }

  /**
   * Answer an approval. `taken`: the daemon took it, or another client's answer did (the
   * card then waits for approval/resolved to show the outcome); `notice`: what the card says.
   */
  async respondApproval(approval, decision, message) {
    const params = { conversationId: this.openId, approvalId: approval.approvalId, decision };
    if (message) params.message = message;
    try {
      await this.rpc.request("approval/respond", params);
      return { taken: true, notice: "" };
    } catch (err) {
      if (err.kind === "already_resolved") {
        this.showError(`Already answered elsewhere: the ${approval.tool || "tool"} call was decided by another client first.`, "info");
        return { taken: true, notice: "Already answered elsewhere" };
      }
      if (err.kind === "not_found") {
        this.showError("That approval is no longer waiting (its turn ended or was interrupted).", "info");
        return { taken: false, notice: "No longer waiting" };
      }
      this.showError(`Answering the approval failed: ${err.message}`, err.kind);
      return { taken: false, notice: "" };
    }
  }

  /** Counters on <body data-*> for whoever debugs (and for the tests): no global object. */
  publishStats() {
    for (const [key, value] of Object.entries(this.stats)) document.body.dataset[key] = String(value);
  }

  // -- opening and closing ---------------------------------------------------------------

  async openConversation(conversationId) {
    if (this.openId && this.openId !== conversationId) {
      const old = this.openId;
      this.rpc.request("conversation/unsubscribe", { conversationId: old }).catch(() => {});
    }
    this.openId = conversationId;
    this.state = null;
    this.followed = null;
    if (location.hash.slice(1) !== conversationId) history.replaceState(null, "", `#${conversationId}`);
    this.sidebar.select(conversationId);
    // Opened from the drawer's list (a phone): the row the focus was on hides with the drawer, so
    // the conversation takes the focus rather than the page's body.
    const fromDrawer = this.drawer.isOpen && this.drawer.sidebar.contains(document.activeElement);
    this.drawer.close();
    if (fromDrawer) $("#transcript").focus();
    this.transcript.clear("Loading…");
    this.composer.setEnabled(false);
    this.renderHeader();
    if (this.rpc.state === "online") await this.subscribe(conversationId);
  }

  closeConversation(message) {
    if (this.openId) this.rpc.request("conversation/unsubscribe", { conversationId: this.openId }).catch(() => {});
    this.openId = null;
    this.state = null;
    this.followed = null;
    history.replaceState(null, "", location.pathname);
    this.sidebar.select(null);
    this.transcript.clear(message);
    this.composer.setEnabled(this.rpc.state === "online");
    this.composer.render(null, null, "");
    this.renderHeader();
    this.renderAgents();
    this.renderPlan();
  }

  /** The first message with no conversation open: start one in the start bar's directory. */
  async startConversation() {
    const cwd = this.startDir.path;
    if (!cwd) {
      this.showError("Choose the directory to start in first (Change, above the message box).");
      return false;
    }
    const result = await this.call("conversation/create", { cwd }, "Starting a conversation");
    if (!result || !result.conversation) return false;
    await this.openConversation(result.conversation.conversationId);
    return Boolean(this.state);
  }

  async createConversation(opts) {
    const result = await this.rpc.request("conversation/create", typeof opts === "string" ? { cwd: opts } : opts);
    await this.openConversation(result.conversation.conversationId);
    this.composer.text.focus();
  }

  // -- views -----------------------------------------------------------------------------

  viewedSessionId() {
    return this.state ? this.followed || this.state.conversation.rootSessionId : null;
  }

  /** `{sessionId}` for a subagent; nothing for the root agent (the daemon's default). */
  sessionArg(sessionId) {
    return this.state && sessionId && sessionId !== this.state.conversation.rootSessionId ? { sessionId } : {};
  }

  sessionParam() {
    return this.followed && this.state && this.followed !== this.state.conversation.rootSessionId
      ? { sessionId: this.followed }
      : {};
  }

  follow(sessionId) {
    if (!this.state) return;
    this.followed = sessionId === this.state.conversation.rootSessionId ? null : sessionId;
    this.renderAll();
    this.selectTab("transcript");
  }

  renderAll() {
    this.renderHeader();
    this.transcript.show(S.session(this.state, this.viewedSessionId()));
    this.renderComposer();
    this.renderAgents();
    this.renderActivity();
    this.renderPlan();
    this.context.renderPins();
    document.body.dataset.seq = String(this.state.seq);
    this.focusFirstApproval();
    this.pageIn();
  }

  /** A subagent at rest comes with none of its items in a snapshot (docs/protocol.md,
   * "Snapshot"): its last page is read when it is shown. */
  pageIn() {
    const sessionId = this.viewedSessionId();
    const session = S.session(this.state, sessionId);
    if (session && session.hasMore && !S.firstServerItemId(this.state, sessionId)) this.loadMore();
  }

  /** The followed agent's plan above the transcript (hidden while it has none). */
  renderPlan() {
    const session = this.state ? S.session(this.state, this.viewedSessionId()) : null;
    renderPlan($("#plan"), session ? session.plan : null);
  }

  renderHeader() {
    const conv = this.state ? this.state.conversation : null;
    this.startDir.show(!this.openId);
    $("#conv-title").textContent = conv ? conv.title || "Untitled" : "OpenVaala";
    const info = conv ? [conv.cwd, conv.agent, conv.model, conv.persisted === false ? "not saved until the first message" : null] : [];
    $("#conv-info").textContent = info.filter(Boolean).join(" · ");
    $("#conv-header").dataset.status = conv ? conv.status || "idle" : "";
    for (const id of ["#change-agent", "#change-model", "#rename", "#archive", "#delete", "#jump-start", "#jump-date"]) $(id).disabled = !conv;
    // Which agent and model are in use, on the buttons that change them.
    $("#change-agent").textContent = conv ? `Agent: ${conv.agent}` : "Agent";
    $("#change-model").textContent = conv ? `Model: ${conv.model}` : "Model";
    this.settings.render(conv);
    this.permissionMode.render(conv);
    this.history.setConversation(conv && conv.persisted !== false ? this.openId : null);
    $("#archive").textContent = conv && conv.archived ? "Unarchive" : "Archive";
    if (conv && conv.title) document.title = `${conv.title} — OpenVaala`;
    this.actionsMenu.setAvailable(Boolean(conv));
    this.actionsMenu.layout();
  }

  /** Continue (turn/resume) shows on the cut turn's notice only while nothing came after it. */
  markCutTurn() {
    const cut = this.state ? S.cutTurnNotice(S.session(this.state, null)) : null;
    for (const button of document.querySelectorAll("#transcript .continue-cut")) {
      button.hidden = !cut || button.closest(".item").dataset.itemId !== cut.itemId;
    }
    this.history.setCut(Boolean(cut));
  }

  renderComposer() {
    this.markCutTurn();
    if (!this.state) return;
    const session = S.session(this.state, this.viewedSessionId());
    const label = this.followed && session ? `To subagent: ${session.info.agent || ""} ${session.info.title || ""}`.trim() : "";
    this.composer.render(session, S.busyReason(this.state), label);
  }

  renderAgents() {
    this.agents.render(this.state, this.viewedSessionId());
    const count = this.state ? this.state.sessions.size : 0;
    $("#agents-count").textContent = count > 1 ? `(${count})` : "";
    const bar = $("#follow-bar");
    const session = this.followed && this.state ? S.session(this.state, this.followed) : null;
    bar.hidden = !session;
    if (session) $("#follow-label").textContent = `Following ${session.info.agent || "subagent"}: ${session.info.title || ""} (${session.info.status})`;
  }

  renderActivity() {
    const el = $("#activity");
    const session = this.state ? S.session(this.state, this.viewedSessionId()) : null;
    let text = "";
    if (session && session.compaction && session.compaction.state === "running") text = "Compacting the context…";
    else if (session && session.compaction && session.compaction.state === "failed") {
      text = `Compaction failed: ${(session.compaction.error && session.compaction.error.message) || "error"}`;
    } else if (session && session.retry) {
      const r = session.retry;
      text = `The model call failed (${(r.error && r.error.message) || "error"}); retry ${r.attempt}/${r.maxAttempts} in ${r.delaySeconds}s`;
    } else if (session && S.awaitingApproval(this.state, session)) {
      text = "Waiting for your approval…";
    } else if (this.state && S.pendingApprovals(this.state).length) {
      const agent = S.pendingApprovals(this.state)[0].agent || "another agent";
      text = `Waiting for your approval (${agent})…`;
    } else if (session && session.turn) text = "Working…";
    el.textContent = text;
    el.hidden = !text;
  }

  selectTab(tab) {
    this.tab = tab;
    $("#transcript").hidden = tab !== "transcript";
    $("#agents").hidden = tab !== "agents";
    markTab($("#conv-header [role='tablist']"), tab);
    if (tab === "agents") this.renderAgents();
  }

  bindHeader() {
    $("#tab-transcript").addEventListener("click", () => this.selectTab("transcript"));
    $("#tab-agents").addEventListener("click", () => this.selectTab("agents"));
    bindTabs($("#conv-header [role='tablist']"), (name) => this.selectTab(name));
    $("#follow-back").addEventListener("click", () => this.follow(this.state.conversation.rootSessionId));
    $("#jump-start").addEventListener("click", () => this.jumpToStart());
    $("#jump-date").addEventListener("change", (event) => this.jumpToDate(event.target.value));
    $("#change-agent").addEventListener("click", () => this.settings.openPicker());
    $("#change-model").addEventListener("click", () => this.settings.openModelPicker());
    this.escape.add($("#model-form"), () => this.settings.closeModelPicker());
    const renameForm = $("#rename-form");
    $("#rename").addEventListener("click", () => {
      $("#rename-input").value = this.state ? this.state.conversation.title || "" : "";
      renameForm.hidden = false;
      $("#conv-title").hidden = true;
      $("#rename-input").focus();
    });
    const closeRename = () => {
      const inside = renameForm.contains(document.activeElement);
      renameForm.hidden = true;
      $("#conv-title").hidden = false;
      if (inside) $("#rename").focus();
    };
    this.escape.add(renameForm, closeRename);
    $("#rename-cancel").addEventListener("click", closeRename);
    renameForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const title = $("#rename-input").value.trim();
      if (title) await this.call("conversation/rename", { conversationId: this.openId, title }, "Rename");
      closeRename();
    });
    $("#archive").addEventListener("click", async () => {
      const method = this.state && this.state.conversation.archived ? "conversation/unarchive" : "conversation/archive";
      if (await this.call(method, { conversationId: this.openId }, "Archive")) this.sidebar.refresh();
    });
    const del = $("#delete");
    let confirmTimer = null;
    del.addEventListener("click", async () => {
      if (!del.classList.contains("confirm")) {
        del.classList.add("confirm");
        del.textContent = "Really delete?";
        confirmTimer = setTimeout(() => {
          del.classList.remove("confirm");
          del.textContent = "Delete";
        }, 5000);
        return;
      }
      clearTimeout(confirmTimer);
      del.classList.remove("confirm");
      del.textContent = "Delete";
      const id = this.openId;
      if (await this.call("conversation/delete", { conversationId: id }, "Delete")) {
        this.sidebar.removed(id);
        if (this.openId === id) this.closeConversation("The conversation was deleted.");
      }
    });
  }

  // -- actions ---------------------------------------------------------------------------

  /** A request whose failure is shown to the user. Resolves with the result, or null. */
  async call(method, params, label) {
    try {
      return (await this.rpc.request(method, params)) || {};
    } catch (err) {
      const friendly = FRIENDLY[err.kind];
      this.showError(friendly ? `${label} ${friendly}.` : `${label} failed: ${err.message}`, err.kind);
      return null;
    }
  }

  async send(text, mode, images = []) {
    if (!this.openId && !(await this.startConversation())) throw new Error("not started");
    const command = parseCommand(text);
    if (command) return this.memory.run(command);
    // The conversation and session the message was written in: a slow command or MCP server
    // below must not send it to whatever conversation is open by the time it answers.
    const target = { conversationId: this.openId, ...this.sessionParam() };
    if (!/^\s*\/mcp__/.test(text)) {
      // A custom command (custom_commands.js) first: its text may mention MCP resources.
      text = await expandCustom(text, target.conversationId, (method, params) => this.call(method, params, "Command"));
      if (text === null) throw new Error("not sent");
    }
    try {
      text = await this.composer.mcp.expand(text); // MCP prompts and resources (mcp_picker.js)
    } catch (err) {
      this.showError(`Not sent: ${err.message || err}`, err.kind);
      throw err;
    }
    const result = await this.call(
      "input/send",
      { ...target, text, mode, ...(images.length ? { images } : {}) },
      "Send",
    );
    if (!result) throw new Error("not sent");
  }

  async compact() {
    const result = await this.call("conversation/compact", { conversationId: this.openId }, "Compact context");
    if (result && result.compacted === false) {
      this.showError(`Nothing compacted: ${result.reason || "the history is too short"}.`, "info");
    }
  }

  async itemAction(action, item) {
    if (!this.openId) return;
    if (action === "continue") {
      await this.call("turn/resume", { conversationId: this.openId }, "Continue");
      return;
    }
    if (action === "pin") return this.context.togglePin(item);
    if (action === "restart") {
      const root = this.state && S.session(this.state, null);
      const result = await this.history.rewind(item, root ? root.items : []);
      if (result && result.conversation) {
        await this.openConversation(result.conversation.conversationId);
        this.composer.setText(result.composerText || "");
        if (result.composerImages) this.composer.attachments.restore(result.composerImages);
        this.sidebar.refresh();
      }
    } else if (action === "fork") {
      const result = await this.call("conversation/fork", { conversationId: this.openId, upToItemId: item.itemId }, "Fork");
      if (result && result.conversation) {
        await this.openConversation(result.conversation.conversationId);
        this.sidebar.refresh();
      }
    }
  }

  /** Read the rest of the shown session's history from the daemon, in big pages back to its
   * first item. False when that failed (said) or the view changed meanwhile. */
  async readAllHistory() {
    if (!this.state) return false;
    const state = this.state;
    const sessionId = this.viewedSessionId();
    const session = S.session(state, sessionId);
    try {
      while (session && session.hasMore) {
        const result = await this.rpc.request("conversation/read", this.olderPage(state, sessionId));
        if (state !== this.state || sessionId !== this.viewedSessionId()) return false;
        S.prependItems(state, sessionId, result.items || [], Boolean(result.hasMore));
      }
    } catch (err) {
      if (err.kind !== "offline") this.showError(`Could not read the conversation's history: ${err.message}`);
      return false;
    }
    this.context.renderPins();
    return true;
  }

  async jumpToStart() {
    if (!(await this.readAllHistory())) return;
    this.transcript.showStart();
    this.announce("At the start of the conversation.");
  }

  /** The first item on or after `day` (YYYY-MM-DD, the item's UTC date). */
  async jumpToDate(day) {
    if (!day || !(await this.readAllHistory())) return;
    const session = S.session(this.state, this.viewedSessionId());
    const index = session.items.findIndex((i) => (i.createdAt || "").slice(0, 10) >= day);
    if (index < 0) {
      this.showError(`Nothing in this conversation on or after ${day}.`, "info");
      return;
    }
    this.transcript.showFrom(index);
    this.announce(`Jumped to ${(session.items[index].createdAt || "").slice(0, 10)}.`);
  }

  /** The first message holding `needle` (a search snippet's words), drawn and marked. */
  async jumpToText(needle) {
    if (!(await this.readAllHistory())) return;
    const session = S.session(this.state, this.viewedSessionId());
    const index = session.items.findIndex(
      (i) => (i.type === "user_message" || i.type === "agent_message") && typeof i.text === "string" && i.text.includes(needle),
    );
    if (index < 0) return; // a subagent's message, or changed since: the conversation as it opens
    this.transcript.showFrom(index);
    this.announce("At the message the search found.");
  }

  /** conversation/read's params for the page before the session's first item. A subagent at
   * rest comes with no items in a snapshot (docs/protocol.md, "Snapshot"): with none, its last
   * page. */
  olderPage(state, sessionId) {
    const before = S.firstServerItemId(state, sessionId);
    const params = { conversationId: state.conversationId, sessionId, limit: HISTORY_PAGE };
    if (before) params.beforeItem = before;
    return params;
  }

  async loadMore() {
    if (this.loadingMore || !this.state) return;
    const sessionId = this.viewedSessionId();
    const session = S.session(this.state, sessionId);
    if (!session || !session.hasMore) return;
    this.loadingMore = true;
    const state = this.state;
    try {
      const result = await this.rpc.request("conversation/read", this.olderPage(state, sessionId));
      if (state !== this.state || sessionId !== this.viewedSessionId()) return;
      const fresh = S.prependItems(state, sessionId, result.items || [], Boolean(result.hasMore));
      this.transcript.prepended(fresh);
      this.context.renderPins();
    } catch (err) {
      if (err.kind !== "offline") this.showError(`Could not load earlier messages: ${err.message}`);
    } finally {
      this.loadingMore = false;
    }
  }

  showError(message, kind = "error") {
    const box = $("#errors");
    const row = h("div", { class: "error", dataset: { kind } },
      h("span", {}, message),
      h("button", { type: "button", class: "dismiss", title: "Dismiss", onclick: () => row.remove() }, "×"));
    box.append(row);
    setTimeout(() => row.remove(), ERROR_SHOW_MS);
  }
}

const app = new App();
app.start();
