// Evaluated in the page by test_state.py: folds a scripted event sequence.
(async () => {
  const S = await import('./static/js/state.js');
  const conv = {conversationId: 'c1', rootSessionId: 'r', title: 't'};
  const snap = {conversation: conv, sessions: [{sessionId: 'r', parentSessionId: null, status: 'running',
    agent: 'default', items: [{itemId: 'u1', type: 'user_message', text: 'hi', status: 'completed'}],
    hasMore: true, turn: {turnId: 'T', items: [{itemId: 'a1', type: 'agent_message', text: 'He', status: 'in_progress'}]},
    inbox: [], usage: {used: 5, contextWindow: 100, source: 'estimated'}}]};
  const st = S.fromSnapshot(snap, 10);
  const n = (seq, method, params) => S.apply(st, {method, params: {conversationId: 'c1', seq, ...params}});
  const out = {};
  out.delta = n(11, 'item/delta', {sessionId: 'r', itemId: 'a1', field: 'text', delta: 'llo'}).status;
  out.duplicate = n(11, 'item/delta', {sessionId: 'r', itemId: 'a1', field: 'text', delta: 'llo'}).status;
  out.old = n(3, 'item/delta', {sessionId: 'r', itemId: 'a1', field: 'text', delta: 'x'}).status;
  out.gap = n(13, 'item/delta', {sessionId: 'r', itemId: 'a1', field: 'text', delta: 'x'}).status;
  out.other = S.apply(st, {method: 'item/delta', params: {conversationId: 'c2', seq: 12}}).status;
  out.text = st.sessions.get('r').byId.get('a1').text;
  n(12, 'session/started', {session: {sessionId: 'k', parentSessionId: 'r', agent: 'helper', status: 'running'}});
  n(13, 'session/started', {session: {sessionId: 'g', parentSessionId: 'k', agent: 'grandchild', status: 'idle'}});
  n(14, 'item/started', {sessionId: 'r', turnId: 'T', item: {itemId: 'z', type: 'reasoning', text: '', status: 'in_progress'}});
  n(15, 'item/discarded', {sessionId: 'r', itemId: 'z'});
  n(16, 'item/completed', {sessionId: 'r', item: {itemId: 'a1', type: 'agent_message', text: 'Hello', status: 'completed'}});
  n(17, 'inbox/updated', {sessionId: 'r', inputs: [{inputId: 'i', text: 'q', mode: 'queue', origin: 'user'}]});
  out.busy = S.busyReason(st);
  n(18, 'turn/ended', {sessionId: 'r', turnId: 'T', status: 'failed', error: {kind: 'x', message: 'boom'}});
  out.busyAfter = S.busyReason(st);
  out.items = st.sessions.get('r').items.map(i => i.itemId + ':' + i.status);
  out.tree = S.sessionTree(st).map(({session, depth}) => session.info.agent + '@' + depth);
  out.first = S.firstServerItemId(st, 'r');
  S.prependItems(st, 'r', [{itemId: 'u0', type: 'user_message', text: 'old'}, {itemId: 'u1'}], false);
  out.afterPrepend = st.sessions.get('r').items.map(i => i.itemId);
  // A failed turn whose notice the daemon kept: no second, local mark.
  n(19, 'turn/started', {sessionId: 'r', turnId: 'T2'});
  n(20, 'item/completed', {sessionId: 'r', item: {itemId: 'n2', type: 'notice', kind: 'turn_failed', turnId: 'T2', text: 'The turn failed: boom', status: 'completed'}});
  n(21, 'turn/ended', {sessionId: 'r', turnId: 'T2', status: 'failed', error: {kind: 'x', message: 'boom'}});
  out.kept = st.sessions.get('r').items.slice(-2).map(i => i.itemId);
  n(22, 'compaction/started', {sessionId: 'r', reason: 'manual'});
  out.busyCompacting = S.busyReason(st);
  n(23, 'compaction/completed', {sessionId: 'r', reason: 'manual', summaryItemId: 's'});
  out.seq = st.seq;
  return out;
})
