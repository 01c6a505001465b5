// The daemon's config.toml state (docs/protocol.md, config/reloaded and config/error): an error
// stays shown until a good file loads; a reload is said for a few seconds.

const RELOADED_SHOWN_MS = 8000;

export class ConfigStatus {
  constructor(element) {
    this.el = element;
    this.timer = null;
  }

  /** `status`: the params of config/error or config/reloaded, or initialize's `config`. */
  show(status, { atConnect = false } = {}) {
    clearTimeout(this.timer);
    if (!status) return;
    if (status.state === "error") {
      this.el.dataset.state = "error";
      this.el.textContent = `Config error: ${status.message}`;
      this.el.hidden = false;
      return;
    }
    if (atConnect) {
      // A good file at connect time is nothing to report; a stale error is cleared.
      this.el.hidden = true;
      return;
    }
    this.el.dataset.state = "ok";
    const message = String(status.message || "");
    this.el.textContent = message.charAt(0).toUpperCase() + message.slice(1);
    this.el.hidden = false;
    this.timer = setTimeout(() => { this.el.hidden = true; }, RELOADED_SHOWN_MS);
  }
}
