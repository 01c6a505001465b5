// Evaluated in the page by test_approvals.py with events the daemon really sent: a turn whose
// shell call waited for an approval, folded from the snapshot before it and from a snapshot
// taken while it waited.
(async (rec) => {
  const S = await import('./static/js/state.js');
  const out = {statuses: [], whileWaiting: null};
  const st = S.fromSnapshot(rec.before.snapshot, rec.before.seq);
  const root = st.conversation.rootSessionId;
  for (const note of rec.notes) {
    out.statuses.push(S.apply(st, note).status);
    if (note.method === 'session/updated' && note.params.session.status === 'awaiting_approval') {
      const s = S.session(st, root);
      out.whileWaiting = {
        awaiting: S.awaitingApproval(st, s),
        pending: S.pendingApprovals(st).map((a) => a.tool + ' ' + a.summary),
        items: s.items.map((i) => i.type + ':' + i.status),
        busy: S.busyReason(st),
      };
    }
  }
  const items = (state) => S.session(state, root).items.map((i) => i.type + ':' + i.status);
  out.items = items(st);
  out.approval = [...st.approvals.values()].map((a) => [a.agent, a.tool, a.summary, a.decision, a.message]);
  out.awaitingAtEnd = S.awaitingApproval(st, S.session(st, root));
  // Joined while it waited: the snapshot's pending approval, then the rest of the events.
  const mid = S.fromSnapshot(rec.during.snapshot, rec.during.seq);
  out.midPending = S.pendingApprovals(mid).map((a) => a.approvalId);
  out.midStatus = S.session(mid, root).info.status;
  out.midStatuses = [];
  for (const note of rec.notes) out.midStatuses.push(S.apply(mid, note).status);
  out.midItems = items(mid);
  out.approvalId = [...st.approvals.keys()][0];
  return out;
})
