// The websocket to the daemon: JSON-RPC requests, notifications, reconnection with backoff.
//
// Authentication is the HttpOnly session cookie the browser got for a one-time login code, scoped
// to the app's path (docs/security.md); the browser sends it with the upgrade by itself. After every (re)connection the first request is
// `initialize`; only then is the connection "online" and `onOnline` called, so the caller can
// resubscribe (with `afterSeq`) before anything else.

export class RpcError extends Error {
  constructor(kind, message, data = {}) {
    super(message);
    this.kind = kind;
    this.data = data;
  }
}

const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 8000;

export class Connection {
  /**
   * @param {{url: string, clientInfo: object, protocolVersion: number,
   *   onNotification: (note: object) => void, onState: (state: string, detail?: string) => void,
   *   onOnline: (serverInit: object) => void}} options
   */
  constructor(options) {
    this.options = options;
    this.ws = null;
    this.state = "connecting"; // connecting | online | offline | unauthorized
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject, method}
    this.failures = 0;
    this.timer = null;
    this.server = null;
  }

  start() {
    this._connect();
  }

  /** Send a request; resolves with its result, rejects with an RpcError. */
  request(method, params = {}) {
    if (this.state !== "online" && method !== "initialize") {
      return Promise.reject(new RpcError("offline", "Not connected to the daemon: reconnecting…"));
    }
    return this._send(method, params);
  }

  /** Drop the socket now and reconnect (used after the page wakes up, and by tests). */
  reconnectNow() {
    if (this.ws) this.ws.close();
    else this._connect();
  }

  _send(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      try {
        this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      } catch (err) {
        this.pending.delete(id);
        reject(new RpcError("offline", "Not connected to the daemon"));
      }
    });
  }

  _setState(state, detail) {
    this.state = state;
    this.options.onState(state, detail);
  }

  _connect() {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.state !== "unauthorized") this._setState(this.failures ? "offline" : "connecting");
    let ws;
    try {
      ws = new WebSocket(this.options.url);
    } catch (err) {
      this._scheduleReconnect();
      return;
    }
    this.ws = ws;
    ws.onopen = () => this._initialize(ws);
    ws.onmessage = (event) => this._receive(event.data);
    ws.onclose = () => this._closed(ws);
    ws.onerror = () => {}; // followed by close
  }

  async _initialize(ws) {
    try {
      const result = await this._send("initialize", this.options.initializeParams);
      if (ws !== this.ws) return;
      this.server = result;
      this.failures = 0;
      this._setState("online");
      this.options.onOnline(result);
    } catch (err) {
      if (ws === this.ws) ws.close();
    }
  }

  _receive(data) {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch {
      return;
    }
    if (msg.id !== undefined && msg.id !== null && (msg.result !== undefined || msg.error)) {
      const waiter = this.pending.get(msg.id);
      if (!waiter) return;
      this.pending.delete(msg.id);
      if (msg.error) {
        const kind = (msg.error.data && msg.error.data.kind) || "error";
        waiter.reject(new RpcError(kind, msg.error.message || kind, msg.error.data || {}));
      } else {
        waiter.resolve(msg.result);
      }
      return;
    }
    if (msg.method) this.options.onNotification({ method: msg.method, params: msg.params || {} });
  }

  _closed(ws) {
    if (ws !== this.ws) return;
    this.ws = null;
    for (const waiter of this.pending.values()) {
      waiter.reject(new RpcError("offline", "The connection to the daemon dropped"));
    }
    this.pending.clear();
    this.failures += 1;
    this._setState("offline");
    this._checkLogin();
    this._scheduleReconnect();
  }

  _scheduleReconnect() {
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.max(0, this.failures - 1));
    const delay = base * (0.75 + Math.random() * 0.5);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this._connect(), delay);
  }

  /** A refused upgrade looks like any drop; ask plain HTTP whether the cookie is still good. */
  async _checkLogin() {
    try {
      const response = await fetch("./", { method: "GET", cache: "no-store", credentials: "same-origin" });
      if (response.status === 401) this._setState("unauthorized");
    } catch {
      // the daemon is down: stay "offline"
    }
  }
}
