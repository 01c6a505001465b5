"""reindex with a copy of a conversation's directory beside it (a backup made in place): the copy
is skipped with its reason, the conversation is indexed once, and reindex finishes."""

from __future__ import annotations

import shutil
import sqlite3

from openvaala_server.domain.ids import new_id
from openvaala_server.store.paths import DataDir
from openvaala_server.store.reindex import reindex
from openvaala_server.store.store import Store

from .helpers import created


async def test_a_copied_conversation_directory_is_skipped_not_fatal(data_dir: DataDir) -> None:
    store = await Store.open(data_dir)
    original = created("original")
    await store.create_conversation(original)
    await store.close()
    cid = original["conversationId"]
    copy = new_id()
    shutil.copytree(data_dir.conversation_dir(cid), data_dir.conversation_dir(copy))

    report = await reindex(data_dir)
    assert report.indexed == [cid]
    reasons = {s.name: s.reason for s in report.skipped}
    assert cid in reasons[copy] and "copy" in reasons[copy]
    conn = sqlite3.connect(data_dir.metadata_db)
    assert conn.execute("SELECT id FROM conversations").fetchall() == [(cid,)]
    conn.close()
