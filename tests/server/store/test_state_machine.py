"""Whatever users do, the index the store keeps live equals one rebuilt from the directories."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    rule,
)

from openvaala_server.domain.ids import new_id
from openvaala_server.store import index as ix
from openvaala_server.store.paths import DataDir
from openvaala_server.store.reindex import reindex
from openvaala_server.store.store import Store

from .helpers import created, message

words = st.sampled_from(["alpha", "beta", "gamma", "delta", "épsilon", "ζ"])
texts = st.lists(words, min_size=0, max_size=3).map(" ".join)


class StoreMachine(RuleBasedStateMachine):
    conversations = Bundle("conversations")

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="store-machine-"))
        self.data_dir = DataDir(self.tmp / "home")
        self.loop = asyncio.new_event_loop()
        self.store = self.run(Store.open(self.data_dir))
        self.sessions: dict[str, list[str]] = {}

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def teardown(self) -> None:
        self.run(self.store.close())
        self.loop.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    @rule(target=conversations, title=texts)
    def create(self, title: str) -> str:
        c = created(title)
        self.run(self.store.create_conversation(c))
        self.sessions[c["conversationId"]] = [c["rootSessionId"]]
        return str(c["conversationId"])

    @rule(cid=conversations, items=st.lists(st.tuples(texts, st.booleans()), max_size=4))
    def append_items(self, cid: str, items: list[tuple[str, bool]]) -> None:
        batch = [message(t, "agent_message" if agent else "user_message") for t, agent in items]
        batch.append({"itemId": new_id(), "type": "tool_call", "name": "shell"})
        self.run(self.store.append_items(cid, self.sessions[cid][0], batch))

    @rule(cid=conversations)
    def subagent(self, cid: str) -> None:
        sid, tid = new_id(), new_id()
        root = self.sessions[cid][0]
        self.sessions[cid].append(sid)
        self.run(
            self.store.append_metadata(
                cid,
                [
                    {"type": "session_created", "sessionId": sid, "parentSessionId": root},
                    {"type": "turn_started", "turnId": tid, "sessionId": sid},
                ],
            )
        )
        self.run(self.store.append_items(cid, sid, [message("sub")]))
        self.run(
            self.store.append_metadata(
                cid, [{"type": "turn_ended", "turnId": tid, "status": "completed"}]
            )
        )

    @rule(cid=conversations, title=texts)
    def rename(self, cid: str, title: str) -> None:
        self.run(
            self.store.append_metadata(cid, [{"type": "conversation_renamed", "title": title}])
        )

    @rule(cid=conversations)
    def archive(self, cid: str) -> None:
        self.run(self.store.append_metadata(cid, [{"type": "conversation_archived"}]))

    @rule(cid=conversations)
    def unarchive(self, cid: str) -> None:
        self.run(self.store.append_metadata(cid, [{"type": "conversation_unarchived"}]))

    @rule(cid=consumes(conversations))
    def delete(self, cid: str) -> None:
        self.run(self.store.delete_conversation(cid))

    @rule()
    def reindex_live(self) -> None:
        self.run(self.store.reindex())

    @rule()
    def reopen(self) -> None:
        self.run(self.store.close())
        self.store = self.run(Store.open(self.data_dir))

    @invariant()
    def live_index_equals_rebuilt(self) -> None:
        live = self.run(self.store.dump_index())
        db = self.tmp / f"check-{new_id()}.db"
        self.run(reindex(self.data_dir, db_path=db))
        conn = sqlite3.connect(db)
        try:
            assert live == ix.dump(conn)
        finally:
            conn.close()
            db.unlink()


StoreMachine.TestCase.settings = settings(
    max_examples=25,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestStoreMachine = StoreMachine.TestCase
