"""The search index (store/index.py SCHEMA, store/reindex.py): a reindexed index answers every
search as the live one did; an index of the previous schema is rebuilt at open; a reindexed
index goes on merging its FTS5 segments as the live store writes."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from openvaala_server.store import index as ix
from openvaala_server.store.paths import DataDir
from openvaala_server.store.reindex import reindex
from openvaala_server.store.store import Store

from .helpers import created, message

# Lengths differ where texts match one query alike: bm25 ties come back in any order.
TEXTS = {
    "parser": ["the parser fails on a token", "tokenizer rewrite", "a parser for the lexer"],
    "unicode": ["Ääkköset ovat mukana", "naïve café résumé", "東京 タワー", "😀 emoji only"],
    "punct": ["foo-bar and baz.qux", "email me: someone@example.com", 'quote " and \\ slash'],
    "repeat": ["parser parser parser parser", "the the the the the the parser", "tokenizer"],
}
# What users type: words, prefixes, several words, non-ASCII, punctuation inside a word.
QUERIES = [
    "parser",
    "pars",
    "token",
    "tokenizer",
    "the parser",
    "parser lexer",
    "ääk",
    "Ääkköset",
    "cafe",
    "café",
    "résumé",
    "東京",
    "😀",
    "foo-bar",
    "baz.qux",
    "someone@example",
    '"and',
    "nothing-here",
    "repeat",
    "",
]


async def search_everything(
    store: Store, cids: list[str]
) -> dict[str, tuple[list[str], list[str]]]:
    """Every query's listing (ids in order) and ranked messages (texts in order)."""
    results: dict[str, tuple[list[str], list[str]]] = {}
    for query in QUERIES:
        found, _ = await store.list_conversations(search=query, limit=100)
        ranked = await store.search_messages(cids, query, 20)
        results[query] = ([s["conversationId"] for s in found], ranked)
    return results


async def test_reindexed_search_answers_as_the_live_index(data_dir: DataDir) -> None:
    store = await Store.open(data_dir)
    ids: dict[str, str] = {}
    try:
        for name, texts in TEXTS.items():
            c = created(f"{name} conversation")
            await store.create_conversation(c)
            cid = c["conversationId"]
            ids[name] = cid
            # One append per text (the live index's small batches) and one of several.
            for text in texts[:1]:
                await store.append_items(cid, c["rootSessionId"], [message(text)])
            items = [message(t, "agent_message") for t in texts[1:]]
            await store.append_items(cid, c["rootSessionId"], items)
        rename = {"type": "conversation_renamed", "title": "renamed ääkköset"}
        await store.append_metadata(ids["repeat"], [rename])
        cids = sorted(ids.values())
        live = await search_everything(store, cids)
    finally:
        await store.close()

    # What a user finds, spelled out for a few queries (the rest: equal before and after).
    def listed(query: str) -> set[str]:
        ids_found, _ = live[query]
        return set(ids_found)

    assert listed("pars") == {ids["parser"], ids["repeat"]}
    assert listed("ääk") == listed("Ääkköset") == {ids["repeat"], ids["unicode"]}
    assert listed("cafe") == {ids["unicode"]}
    assert listed("東京") == {ids["unicode"]}
    assert listed("foo-bar") == {ids["punct"]}
    assert listed("parser lexer") == {ids["parser"]}
    assert listed("repeat") == set()  # the old title is gone with the rename
    assert live["nothing-here"] == ([], [])
    assert live["parser"][1][0] == "parser parser parser parser"  # the best match first
    report = await reindex(data_dir)
    assert sorted(report.indexed) == cids
    store = await Store.open(data_dir)
    try:
        assert await search_everything(store, cids) == live
    finally:
        await store.close()


def old_schema_index(path: Path) -> None:
    """An index as the previous OpenVaala wrote it: schema 2, token counts per text kept."""
    conn = sqlite3.connect(path)
    try:
        conn.executescript(ix.SCHEMA.replace(", columnsize=0", ""))
        conn.execute("PRAGMA user_version = 2")
        conn.execute("INSERT INTO state VALUES ('clean', '1')")
        conn.commit()
    finally:
        conn.close()


async def test_an_index_of_the_previous_schema_is_rebuilt_at_open(
    data_dir: DataDir, caplog: pytest.LogCaptureFixture
) -> None:
    store = await Store.open(data_dir)
    c = created("kept")
    await store.create_conversation(c)
    await store.append_items(c["conversationId"], c["rootSessionId"], [message("needle")])
    await store.close()
    db = data_dir.metadata_db
    for stale in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        stale.unlink(missing_ok=True)
    old_schema_index(db)  # empty, but clean: only its version tells it apart
    with caplog.at_level(logging.WARNING):
        store = await Store.open(data_dir)
    try:
        found, _ = await store.list_conversations(search="needle")
        assert [s["conversationId"] for s in found] == [c["conversationId"]]
    finally:
        await store.close()
    assert any("rebuilding" in rec.message for rec in caplog.records)
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone() == (ix.SCHEMA_VERSION,)
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'search'").fetchone()[0]
        assert "columnsize=0" in sql
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        assert "search_docsize" not in tables
    finally:
        conn.close()


async def test_a_reindexed_index_merges_segments_again(data_dir: DataDir) -> None:
    store = await Store.open(data_dir)
    c = created("merging")
    await store.create_conversation(c)
    await store.append_items(c["conversationId"], c["rootSessionId"], [message("words")])
    await store.close()
    await reindex(data_dir)
    conn = sqlite3.connect(data_dir.metadata_db)
    try:
        # Reindex loads with FTS5's automatic merging off; left off, every later write would
        # add a segment that no write merges, and every search would read more of them.
        rows = conn.execute("SELECT v FROM search_config WHERE k = 'automerge'").fetchall()
        assert rows in ([], [(4,)])
        assert conn.execute("INSERT INTO search (search) VALUES ('integrity-check')")
    finally:
        conn.close()
