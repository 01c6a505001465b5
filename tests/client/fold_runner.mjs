// Replays a recorded stream (tests/client/streams/*.jsonl) through the web client's fold
// (openvaala_web/static/js/state.js) and prints the projection of its state after the snapshot
// and after every notification, for tests/client/test_fold_parity.py to compare with the
// Python fold. Usage: node fold_runner.mjs <state.mjs URL> <stream.jsonl>
import { readFileSync } from "node:fs";

const [stateUrl, streamPath] = process.argv.slice(2);
const S = await import(stateUrl);
const lines = readFileSync(streamPath, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));

const nonLocal = (items) => items.filter((i) => !i.local).map((i) => ({ ...i }));

function project(state) {
  const sessions = {};
  for (const [sid, s] of [...state.sessions.entries()].sort()) {
    sessions[sid] = {
      info: s.info,
      items: nonLocal(s.items),
      hasMore: s.hasMore,
      turnId: s.turn ? s.turn.turnId : null,
      inbox: s.inbox,
      usage: s.usage || null,
      plan: s.plan || null,
      pinned: s.pinned,
      compacting: Boolean(s.compaction && s.compaction.state === "running"),
      retrying: Boolean(s.retry),
    };
  }
  return {
    conversation: state.conversation,
    deleted: state.deleted,
    seq: state.seq,
    approvals: S.pendingApprovals(state).map((a) => a.approvalId),
    sessions,
  };
}

const state = S.fromSnapshot(lines[0].snapshot, lines[0].seq);
const out = [project(state)];
for (const note of lines.slice(1)) {
  const { status } = S.apply(state, note);
  if (status !== "applied") throw new Error(`${note.method} seq ${note.params.seq}: ${status}`);
  out.push(JSON.parse(JSON.stringify(project(state))));
}
process.stdout.write(JSON.stringify(out));
