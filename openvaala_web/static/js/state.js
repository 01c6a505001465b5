// The state of one open conversation, folded from a snapshot and the notifications that follow.
//
// Pure: no DOM, no socket. `apply` returns what changed so the views can update only that,
// and enforces the ordering contract: every conversation notification carries `seq`, one more
// than the last; an older or repeated one is dropped ("stale": never a duplicate delta), and a
// jump ahead is reported as a "gap" so the caller resubscribes with `afterSeq`.
//
// Approvals (docs/protocol.md): each pending request is kept in `state.approvals` and shown as a
// local item of type "approval" in the requesting session and, for a subagent's request, in the
// root session too, so the user sees it from the main agent's transcript. Its answer (from any
// client) turns the same item into its outcome.

/** @typedef {{type: string, sessionId?: string, itemId?: string, field?: string, delta?: string}} Change */

/** `previous`: the state this snapshot replaces (a resubscription), whose reply cut by a daemon
 * crash is kept (`keepCutStream`). */
export function fromSnapshot(snapshot, seq, previous = null) {
  const state = {
    conversationId: snapshot.conversation.conversationId,
    conversation: { ...snapshot.conversation },
    seq,
    deleted: false,
    sessions: new Map(),
    approvals: new Map(), // approvalId -> approval (see approvalRequested)
  };
  for (const s of snapshot.sessions || []) {
    const session = newSession(s);
    session.hasMore = Boolean(s.hasMore);
    for (const item of s.items || []) addItem(session, item);
    if (s.turn) {
      session.turn = { turnId: s.turn.turnId };
      for (const item of s.turn.items || []) addItem(session, item);
    }
    session.inbox = s.inbox || [];
    session.usage = s.usage || null;
    session.plan = s.plan || null;
    session.pinned = s.pinned || [];
    if (previous) keepCutStream(previous.sessions.get(session.info.sessionId), session);
    state.sessions.set(session.info.sessionId, session);
  }
  for (const request of snapshot.approvals || []) approvalRequested(state, request);
  return state;
}

// The daemon saves a message when it completes: text streamed before a crash is not in the new
// daemon's snapshot. When a snapshot ends the turn this page saw running with recovery's
// `server_stopped` notice, the streamed items it lacks stay where they were, marked interrupted (openvaala_server/client/cut_stream.py, the
// same rule for the Python clients; docs/design.md).
function keepCutStream(before, after) {
  if (!before) return;
  const turnId = before.turn ? before.turn.turnId : null;
  // Only a crash: a turn that ended in a live daemon while the page was away saved or withdrew
  // what it streamed (a retried attempt, a rewound reply) and nothing is brought back.
  const stopped = (i) => i.type === "notice" && i.kind === "server_stopped" && i.turnId === turnId;
  const crashed =
    turnId !== null && !(after.turn && after.turn.turnId === turnId) && after.items.some(stopped);
  let anchor = null;
  for (const item of before.items) {
    if (after.byId.has(item.itemId)) {
      anchor = item.itemId;
      continue;
    }
    const streamed = item.type === "agent_message" || item.type === "reasoning";
    const cut = crashed && streamed && item.status === "in_progress" && item.turnId === turnId && item.text;
    // A reply kept at an earlier crash: no daemon has it, so every later snapshot (a second
    // crash, a reconnect) lacks it too, and it stays where it was.
    if (!cut && !item.keptCut) continue;
    const kept = { ...item, status: "interrupted", keptCut: true };
    const at = anchor === null ? after.items.length : after.items.indexOf(after.byId.get(anchor)) + 1;
    after.items.splice(at, 0, kept);
    after.byId.set(kept.itemId, kept);
    anchor = kept.itemId;
  }
}

function newSession(wire) {
  const { items, hasMore, turn, inbox, usage, plan, pinned, ...info } = wire;
  return {
    info,
    items: [],
    byId: new Map(),
    hasMore: false,
    turn: null,
    inbox: [],
    usage: null,
    retry: null,
    compaction: null,
    plan: null, // the agent's checklist (docs/protocol.md, "Plan")
    pinned: [], // pinned item ids (docs/protocol.md, "Context")
  };
}

function addItem(session, item) {
  const copy = { ...item };
  const old = session.byId.get(copy.itemId);
  if (old) {
    session.items[session.items.indexOf(old)] = copy;
  } else {
    session.items.push(copy);
  }
  session.byId.set(copy.itemId, copy);
  return old ? "itemUpdated" : "itemAdded";
}

export function rootSessionId(state) {
  return state.conversation.rootSessionId;
}

export function session(state, sessionId) {
  return state.sessions.get(sessionId || rootSessionId(state)) || null;
}

/** Older items read with conversation/read {beforeItem}: put them in front, skipping known ones. */
export function prependItems(state, sessionId, items, hasMore) {
  const s = session(state, sessionId);
  if (!s) return [];
  const fresh = items.filter((i) => !s.byId.has(i.itemId)).map((i) => ({ ...i }));
  for (const item of fresh) s.byId.set(item.itemId, item);
  s.items.unshift(...fresh);
  s.hasMore = hasMore;
  return fresh;
}

/** The first item a page of older history must come before (local marks are not the server's). */
export function firstServerItemId(state, sessionId) {
  const s = session(state, sessionId);
  const first = s && s.items.find((i) => !i.local);
  return first ? first.itemId : null;
}

/**
 * Fold one notification `{method, params}` into the state.
 * @returns {{status: "applied"|"stale"|"gap"|"ignored", changes: Change[]}}
 */
export function apply(state, note) {
  const p = note.params || {};
  if (p.conversationId !== state.conversationId || typeof p.seq !== "number") {
    return { status: "ignored", changes: [] };
  }
  if (p.seq <= state.seq) return { status: "stale", changes: [] };
  if (p.seq !== state.seq + 1) return { status: "gap", changes: [] };
  state.seq = p.seq;
  const handler = HANDLERS[note.method];
  const changes = handler ? handler(state, p) || [] : [];
  return { status: "applied", changes };
}

function sessionFor(state, p) {
  let s = state.sessions.get(p.sessionId);
  if (!s && p.sessionId) {
    s = newSession({ sessionId: p.sessionId, parentSessionId: null, status: "idle", title: "" });
    state.sessions.set(p.sessionId, s);
  }
  return s;
}

const HANDLERS = {
  "pins/updated"(state, p) {
    const s = sessionFor(state, p);
    if (!s) return [];
    s.pinned = p.itemIds || [];
    return [{ type: "pins", sessionId: p.sessionId }];
  },
  "plan/updated"(state, p) {
    const s = sessionFor(state, p);
    if (!s) return [];
    s.plan = p.plan || null;
    return [{ type: "plan", sessionId: p.sessionId }];
  },
  "conversation/updated"(state, p) {
    state.conversation = { ...state.conversation, ...p.conversation };
    return [{ type: "conversation" }];
  },
  "conversation/deleted"(state) {
    state.deleted = true;
    return [{ type: "deleted" }];
  },
  "session/started"(state, p) {
    const existing = state.sessions.get(p.session.sessionId);
    if (existing) {
      existing.info = { ...existing.info, ...p.session };
      return [{ type: "session", sessionId: p.session.sessionId }];
    }
    state.sessions.set(p.session.sessionId, newSession(p.session));
    return [{ type: "sessionAdded", sessionId: p.session.sessionId }];
  },
  "session/updated"(state, p) {
    const s = sessionFor(state, { sessionId: p.session.sessionId });
    s.info = { ...s.info, ...p.session };
    return [{ type: "session", sessionId: p.session.sessionId }];
  },
  "turn/started"(state, p) {
    const s = sessionFor(state, p);
    s.turn = { turnId: p.turnId };
    s.retry = null;
    return [{ type: "turn", sessionId: p.sessionId }];
  },
  "turn/ended"(state, p) {
    const s = sessionFor(state, p);
    s.turn = null;
    s.retry = null;
    const changes = [{ type: "turn", sessionId: p.sessionId, ended: p.status || "completed", error: p.error || null }];
    // The daemon keeps a notice (kind "turn_failed") saying why; only when it could not is the
    // reason shown from here, as a local mark.
    const told = s.items.some((i) => i.type === "notice" && i.turnId === p.turnId && i.kind === "turn_failed");
    if (p.status === "failed" && !told) {
      const mark = {
        itemId: `local-failed-${p.turnId}`,
        type: "turn_failed",
        local: true,
        sessionId: p.sessionId,
        turnId: p.turnId,
        status: "failed",
        error: p.error || { kind: "error", message: "the turn failed" },
      };
      changes.push({ type: addItem(s, mark), sessionId: p.sessionId, itemId: mark.itemId });
    }
    return changes;
  },
  "item/started"(state, p) {
    const s = sessionFor(state, p);
    const kind = addItem(s, p.item);
    return [{ type: kind, sessionId: p.sessionId, itemId: p.item.itemId }];
  },
  "item/delta"(state, p) {
    const s = sessionFor(state, p);
    const item = s.byId.get(p.itemId);
    if (!item) return [];
    item[p.field] = (item[p.field] || "") + p.delta;
    return [{ type: "itemDelta", sessionId: p.sessionId, itemId: p.itemId, field: p.field, delta: p.delta }];
  },
  "item/completed"(state, p) {
    const s = sessionFor(state, p);
    const kind = addItem(s, p.item);
    return [{ type: kind, sessionId: p.sessionId, itemId: p.item.itemId }];
  },
  "item/discarded"(state, p) {
    const s = sessionFor(state, p);
    const item = s.byId.get(p.itemId);
    if (!item) return [];
    s.byId.delete(p.itemId);
    s.items.splice(s.items.indexOf(item), 1);
    return [{ type: "itemRemoved", sessionId: p.sessionId, itemId: p.itemId }];
  },
  "inbox/updated"(state, p) {
    const s = sessionFor(state, p);
    s.inbox = p.inputs || [];
    return [{ type: "inbox", sessionId: p.sessionId }];
  },
  "usage/updated"(state, p) {
    const s = sessionFor(state, p);
    s.usage = p.usage || p.Usage || null;
    return [{ type: "usage", sessionId: p.sessionId }];
  },
  "compaction/started"(state, p) {
    const s = sessionFor(state, p);
    s.compaction = { state: "running", reason: p.reason };
    return [{ type: "compaction", sessionId: p.sessionId }];
  },
  "compaction/completed"(state, p) {
    const s = sessionFor(state, p);
    s.compaction = null;
    return [{ type: "compaction", sessionId: p.sessionId }];
  },
  "compaction/failed"(state, p) {
    const s = sessionFor(state, p);
    s.compaction = { state: "failed", reason: p.reason, error: p.error };
    return [{ type: "compaction", sessionId: p.sessionId }];
  },
  "retry/scheduled"(state, p) {
    const s = sessionFor(state, p);
    s.retry = { attempt: p.attempt, maxAttempts: p.maxAttempts, delaySeconds: p.delaySeconds, error: p.error };
    return [{ type: "retry", sessionId: p.sessionId }];
  },
  "approval/requested": approvalRequested,
  "approval/resolved": approvalResolved,
};

/** The id of the local transcript item that shows an approval. */
export function approvalItemId(approvalId) {
  return `approval-${approvalId}`;
}

/** The sessions whose transcripts show an approval: the requester's, and the root's. */
function approvalSessions(state, approval) {
  const ids = [approval.sessionId || rootSessionId(state)];
  if (rootSessionId(state) && !ids.includes(rootSessionId(state))) ids.push(rootSessionId(state));
  return ids;
}

function approvalItem(approval) {
  return {
    itemId: approvalItemId(approval.approvalId),
    type: "approval",
    local: true,
    sessionId: approval.sessionId,
    status: approval.decision ? "resolved" : "pending",
    approval: { ...approval },
  };
}

function showApproval(state, approval) {
  const changes = [{ type: "approval", approvalId: approval.approvalId }];
  for (const sessionId of approvalSessions(state, approval)) {
    const s = sessionFor(state, { sessionId });
    if (!s) continue;
    const item = approvalItem(approval);
    changes.push({ type: addItem(s, item), sessionId, itemId: item.itemId });
  }
  return changes;
}

function approvalRequested(state, p) {
  const { conversationId, seq, ...request } = p;
  const known = state.approvals.get(p.approvalId);
  // A request seen again (a snapshot after a replay) keeps the answer already known.
  const approval = { ...request, decision: known ? known.decision : null, message: known ? known.message : null };
  state.approvals.set(p.approvalId, approval);
  return showApproval(state, approval);
}

function approvalResolved(state, p) {
  const known = state.approvals.get(p.approvalId);
  // Answered before this client saw the request (or it was dropped with an old snapshot):
  // nothing is shown for it, so nothing turns into an outcome.
  if (!known) return [];
  known.decision = p.decision;
  known.message = typeof p.message === "string" && p.message ? p.message : null;
  known.notGranted = typeof p.notGranted === "string" && p.notGranted ? p.notGranted : null;
  return showApproval(state, known);
}

/** Approvals still waiting for an answer, oldest first. */
export function pendingApprovals(state) {
  return state ? [...state.approvals.values()].filter((a) => !a.decision) : [];
}

/** Is a session waiting (its status, or an approval of its own still unanswered)? */
export function awaitingApproval(state, session) {
  if (!session) return false;
  if (session.info.status === "awaiting_approval") return true;
  return pendingApprovals(state).some((a) => a.sessionId === session.info.sessionId);
}

/** Sessions as a tree: [{session, depth}] in display order, parents before their children. */
export function sessionTree(state) {
  const children = new Map();
  for (const s of state.sessions.values()) {
    const parent = s.info.parentSessionId || null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(s);
  }
  const out = [];
  const seen = new Set();
  const walk = (parent, depth) => {
    for (const s of children.get(parent) || []) {
      if (seen.has(s.info.sessionId)) continue;
      seen.add(s.info.sessionId);
      out.push({ session: s, depth });
      walk(s.info.sessionId, depth + 1);
    }
  };
  walk(null, 0);
  for (const s of state.sessions.values()) {
    if (!seen.has(s.info.sessionId)) out.push({ session: s, depth: 1 }); // orphan: parent unknown
  }
  return out;
}

/** Is anything running or waiting (compaction is refused then)? */
export function busyReason(state) {
  for (const s of state.sessions.values()) {
    if (s.compaction && s.compaction.state === "running") return "the context is being compacted";
  }
  if (pendingApprovals(state).length) return "a tool call waits for approval";
  for (const s of state.sessions.values()) {
    if (s.turn) return "a turn is running";
  }
  for (const s of state.sessions.values()) {
    if (s.inbox.length) return "messages are waiting";
  }
  return null;
}

/**
 * The notice of a turn a crash cut (kind "server_stopped", docs/protocol.md "turn/resume") when it
 * is the session's last word: nothing was sent and no turn ran after it. Else null.
 */
export function cutTurnNotice(session) {
  if (!session || session.turn) return null;
  for (let i = session.items.length - 1; i >= 0; i -= 1) {
    const item = session.items[i];
    if (item.type === "notice" && item.kind === "server_stopped") return item;
    if (item.type === "user_message" || item.type === "agent_message" || (item.type === "notice" && item.kind === "resumed")) return null;
  }
  return null;
}
