// Evaluated in the page by test_state.py: folds approvals from a snapshot and notifications.
(async () => {
  const S = await import('./static/js/state.js');
  const conv = {conversationId: 'c1', rootSessionId: 'r', title: 't'};
  const call = {itemId: 'tc', type: 'tool_call', name: 'shell', arguments: {command: 'echo hi'}, status: 'completed'};
  // The snapshot holds one request already waiting (asked before this client subscribed).
  const waiting = {conversationId: 'c1', seq: 4, sessionId: 'r', approvalId: 'a1', tool: 'shell',
    summary: 'echo hi', arguments: {command: 'echo hi'}, reason: 'approval = "always"', agent: 'default'};
  const snap = {conversation: conv, approvals: [waiting], sessions: [
    {sessionId: 'r', parentSessionId: null, status: 'awaiting_approval', agent: 'default', items: [],
      turn: {turnId: 'T', items: [call]}, inbox: []},
    {sessionId: 'k', parentSessionId: 'r', status: 'running', agent: 'helper', items: [], turn: {turnId: 'K'}, inbox: []},
  ]};
  const st = S.fromSnapshot(snap, 10);
  const n = (seq, method, params) => S.apply(st, {method, params: {conversationId: 'c1', seq, ...params}});
  const ids = (sid) => st.sessions.get(sid).items.map((i) => i.itemId + ':' + i.status);
  const out = {};
  out.pendingAtStart = S.pendingApprovals(st).map((a) => a.approvalId);
  out.rootItems = ids('r');
  out.card = st.sessions.get('r').byId.get('approval-a1').approval;
  out.rootWaits = S.awaitingApproval(st, st.sessions.get('r'));
  out.busy = S.busyReason(st);
  // A subagent asks: its transcript and the root's show the request, with its name.
  const sub = n(11, 'approval/requested', {sessionId: 'k', approvalId: 'a2', tool: 'write_file',
    summary: '/etc/passwd', arguments: {path: '/etc/passwd', content: 'x'}, reason: 'outside the workspace', agent: 'helper'});
  out.subStatus = sub.status;
  out.subChanges = sub.changes.map((c) => c.type + ':' + (c.sessionId || c.approvalId));
  out.subItems = ids('k');
  out.rootAfterSub = ids('r');
  out.subAgent = st.sessions.get('r').byId.get('approval-a2').approval.agent;
  n(12, 'session/updated', {session: {sessionId: 'k', status: 'awaiting_approval'}});
  out.subWaits = S.awaitingApproval(st, st.sessions.get('k'));
  // Answered (by any client): the same items turn into their outcome, in place.
  const denied = n(13, 'approval/resolved', {sessionId: 'r', approvalId: 'a1', decision: 'deny', message: 'not now'});
  out.deniedChanges = denied.changes.map((c) => c.type + ':' + (c.sessionId || c.approvalId));
  out.denied = st.approvals.get('a1');
  out.rootAfterDeny = ids('r');
  n(14, 'session/updated', {session: {sessionId: 'r', status: 'running'}});
  out.rootWaitsAfter = S.awaitingApproval(st, st.sessions.get('r'));
  n(15, 'approval/resolved', {sessionId: 'k', approvalId: 'a2', decision: 'allow_conversation'});
  out.allowed = st.sessions.get('k').byId.get('approval-a2').approval.decision;
  out.pendingAtEnd = S.pendingApprovals(st).length;
  out.busyAfter = S.busyReason(st);
  // An answer to a request this client never saw changes nothing; a repeated one is stale.
  out.unknown = n(16, 'approval/resolved', {sessionId: 'r', approvalId: 'zz', decision: 'allow'}).changes.length;
  out.repeat = n(15, 'approval/resolved', {sessionId: 'k', approvalId: 'a2', decision: 'deny'}).status;
  out.allowedStill = st.approvals.get('a2').decision;
  // The approval items are local: paging older history starts from the daemon's items.
  out.first = S.firstServerItemId(st, 'r');
  out.seq = st.seq;
  return out;
})
