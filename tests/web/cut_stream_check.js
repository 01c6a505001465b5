// Evaluated in the page by test_cut_stream.py: a snapshot after a daemon crash keeps the reply
// the page saw streaming, marked interrupted, where it was.
(async () => {
  const S = await import('./static/js/state.js');
  const conv = {conversationId: 'c1', rootSessionId: 'r', title: 't'};
  const user = {itemId: 'u1', type: 'user_message', text: 'hi', status: 'completed', turnId: 'T'};
  const running = {conversation: conv, sessions: [{sessionId: 'r', status: 'running', agent: 'default',
    items: [user], turn: {turnId: 'T', items: [{itemId: 'a1', type: 'agent_message', text: 'He',
    status: 'in_progress', turnId: 'T'}]}, inbox: []}]};
  const st = S.fromSnapshot(running, 10);
  S.apply(st, {method: 'item/delta', params: {conversationId: 'c1', seq: 11, sessionId: 'r',
    itemId: 'a1', field: 'text', delta: 'llo'}});
  const notice = {itemId: 'n1', type: 'notice', kind: 'server_stopped', text: 'stopped', status: 'completed', turnId: 'T'};
  const after = {conversation: conv, sessions: [{sessionId: 'r', status: 'interrupted', agent: 'default',
    items: [user, notice], turn: null, inbox: []}]};
  const kept = S.fromSnapshot(after, 3, st);
  const fresh = S.fromSnapshot(after, 3);
  // The live daemon retried the attempt while the page was away: a1 withdrawn, a2 the reply.
  const again = {itemId: 'a2', type: 'agent_message', text: 'Hello', status: 'completed', turnId: 'T'};
  const retried = S.fromSnapshot({conversation: conv, sessions: [{sessionId: 'r', status: 'idle',
    agent: 'default', items: [user, again], turn: null, inbox: []}]}, 3, st);
  const show = (state) => state.sessions.get('r').items.map(i => `${i.itemId}:${i.status}:${i.text}`);
  return {kept: show(kept), fresh: show(fresh), retried: show(retried)};
})()
