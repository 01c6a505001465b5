// The browsers signed in to this daemon (docs/security.md, "The browser"): when each signed in,
// when it was last used, its user agent, and a button to sign any one out. Plain HTTP under the
// app's path (`sessions`, `sessions/<id>/end`), with this browser's session cookie; the daemon
// marks this browser's own session `current`. Ending it signs this tab out too.

import { h } from "./dom.js";
import { TogglePanel } from "./layout.js";

function when(seconds) {
  return new Date(seconds * 1000).toLocaleString();
}

function sessionLine(s, end) {
  return h(
    "li",
    { class: "web-session", dataset: { id: s.id, current: String(s.current) } },
    h("span", { class: "web-session-agent" }, s.userAgent || "Unknown browser"),
    s.current ? h("span", { class: "web-session-current" }, " (this browser)") : null,
    h("span", { class: "web-session-times" }, `Signed in ${when(s.created)} · last used ${when(s.lastUsed)}`),
    h("button", { type: "button", class: "web-session-end", onclick: () => end(s) }, s.current ? "Sign out" : "End"),
  );
}

/** The browser sessions panel: a button in the sidebar opens it; it reads the list each time. */
export class SessionsPanel extends TogglePanel {
  showError(message) {
    this.el.replaceChildren(h("p", { class: "web-sessions-error", role: "alert" }, message));
  }

  async refresh() {
    let sessions;
    try {
      const response = await fetch("sessions", { cache: "no-store", credentials: "same-origin" });
      if (!response.ok) throw new Error(`the daemon answered ${response.status}`);
      sessions = (await response.json()).sessions || [];
    } catch (err) {
      this.showError(`Could not read the browser sessions: ${err.message || err}`);
      return;
    }
    const refresh = h("button", { type: "button", class: "web-sessions-refresh", onclick: () => this.refresh() }, "Refresh");
    this.el.replaceChildren(
      h("div", { class: "web-sessions-head" }, h("span", {}, "Signed-in browsers"), refresh),
      h("ul", { class: "web-sessions-list" }, sessions.map((s) => sessionLine(s, (x) => this.end(x)))),
    );
  }

  /** End this browser's own session (the "Sign out" button): the daemon then closes the tab's
   * connection, and the banner says it is signed out. */
  async signOut() {
    try {
      const response = await fetch("sessions", { cache: "no-store", credentials: "same-origin" });
      if (!response.ok) throw new Error(`the daemon answered ${response.status}`);
      const current = ((await response.json()).sessions || []).find((s) => s.current);
      if (current) await this.end(current);
    } catch (err) {
      this.open();
      this.showError(`Could not sign out: ${err.message || err}`);
    }
  }

  async end(session) {
    try {
      const response = await fetch(`sessions/${encodeURIComponent(session.id)}/end`, {
        method: "POST", cache: "no-store", credentials: "same-origin",
      });
      if (!response.ok) throw new Error(`the daemon answered ${response.status}`);
    } catch (err) {
      this.showError(`Could not end the browser session: ${err.message || err}`);
      return;
    }
    if (!session.current) await this.refresh();
    // Our own: the daemon closes this tab's connection, which then finds itself signed out.
  }
}
