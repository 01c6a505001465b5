"""The fast paths of reindex give exactly what the line-by-line and row-by-row ones give."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from openvaala_server.domain.records import Record
from openvaala_server.store import index as ix
from openvaala_server.store import journal, reindex
from openvaala_server.store.journal import BAD_LINE, TORN_TAIL, UNKNOWN_TYPE, JournalProblem
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.support.json import j

from .helpers import created, message, rebuilt_dump


def reference(data: bytes) -> journal.JournalRead:
    """`parse_journal` as it was: every line through `parse_line`, one at a time."""
    lines = data.split(b"\n")
    tail = lines.pop()
    result = journal.JournalRead(good_length=len(data) - len(tail))
    if tail:
        result.torn_tail = tail
    elif lines and isinstance(journal.parse_line(lines[-1]), str):
        result.torn_tail = lines.pop() + b"\n"
        result.good_length -= len(result.torn_tail)
    for index, line in enumerate(lines, start=1):
        parsed = journal.parse_line(line)
        if isinstance(parsed, str):
            result.problems.append(JournalProblem(index, BAD_LINE, parsed))
            continue
        if parsed["type"] not in journal.KNOWN_TYPES:
            result.problems.append(JournalProblem(index, UNKNOWN_TYPE, parsed["type"]))
        result.records.append(parsed)
    if result.torn_tail is not None:
        detail = f"{len(result.torn_tail)} bytes without a complete record"
        result.problems.append(JournalProblem(len(lines) + 1, TORN_TAIL, detail))
    return result


def rec(seq: object, kind: object = "item", **rest: object) -> bytes:
    return orjson.dumps({"seq": seq, "ts": "2030-01-01T00:00:00Z", "type": kind, **rest})


GOOD = [rec(1), rec(2, "turn_started", turnId="t"), rec(3, item={"type": "user_message"})]
ODD_LINES = [
    b"not json",
    b"",
    b"   ",
    b"[1, 2]",
    b'"a string"',
    b"7",
    b"null",
    b'{"seq": 4}',  # no type
    b'{"type": "item"}',  # no seq
    rec("4"),
    rec(4.0),
    rec(None),
    rec(True),  # passes isinstance(seq, int), as before
    rec(4, 5),
    rec(4, None),
    rec(4, ["item"]),
    rec(4, "from_the_future"),
    b'{"seq": 4, "type": "item"} {"seq": 5, "type": "item"}',
    b'{"seq": 4, "type": "item"},{"seq": 5, "type": "item"}',
    b'{"seq": 4, "type": "item", "x": [1',
    b"2]}",
    b'{"seq": 4, "type": "item"}\r',
    b'{"seq": 4, "type": "item", "x": "\\ud800"}',
    b'{"seq": 4, "type": "item", "seq": "dup"}',
]
CASES = (
    [b"", b"\n", b"\n\n", b"".join(x + b"\n" for x in GOOD)]
    + [
        b"".join(x + b"\n" for x in [*GOOD[:pos], odd, *GOOD[pos:]])
        for odd in ODD_LINES
        for pos in (0, 1, 3)  # first, in the middle, last (then it counts as torn)
    ]
    + [b"".join(x + b"\n" for x in GOOD) + cut for cut in (b"{", b'{"seq": 4, "ty', rec(4))]
    + [b"".join(x + b"\n" for x in GOOD[:2] + ODD_LINES[19:21] + [GOOD[2]])]
)


@pytest.mark.parametrize("data", CASES)
def test_parse_journal_equals_line_by_line(data: bytes) -> None:
    assert journal.parse_journal(data) == reference(data)


def test_a_bad_line_in_the_middle_is_reported_via_the_fast_path() -> None:
    data = b"".join(x + b"\n" for x in [GOOD[0], b"garbage", GOOD[1], GOOD[2]])
    read = journal.parse_journal(data)
    assert [r["seq"] for r in read.records] == [1, 2, 3]
    assert [(p.line_no, p.kind) for p in read.problems] == [(2, BAD_LINE)]
    assert read.torn_tail is None and read.good_length == len(data)


def test_unknown_types_are_kept_and_reported() -> None:
    data = b"".join(x + b"\n" for x in [GOOD[0], rec(2, "from_the_future"), GOOD[2]])
    read = journal.parse_journal(data)
    assert [r["type"] for r in read.records] == ["item", "from_the_future", "item"]
    assert read.problems == [JournalProblem(2, UNKNOWN_TYPE, "from_the_future")]


def test_torn_tail_is_detected_via_the_fast_path() -> None:
    whole = b"".join(x + b"\n" for x in GOOD)
    read = journal.parse_journal(whole + b'{"seq": 4')
    assert read.torn_tail == b'{"seq": 4' and read.good_length == len(whole)
    assert read.problems[-1].kind == TORN_TAIL and len(read.records) == 3


@pytest.mark.parametrize("data", CASES)
def test_read_repaired_equals_repair_then_read(tmp_path: Path, data: bytes) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_bytes(data)
    two.write_bytes(data)
    sidecar = journal.repair(one)
    expected = journal.read_journal(one)
    read, sidecar2 = journal.read_repaired(two)
    assert read == expected
    assert (sidecar is None) == (sidecar2 is None)
    assert two.read_bytes() == one.read_bytes()
    if sidecar is not None and sidecar2 is not None:
        assert sidecar2.name == "two.jsonl.torn-1"
        assert sidecar2.read_bytes() == sidecar.read_bytes()


async def make_corpus(data_dir: DataDir, texts: list[str]) -> None:
    store = await Store.open(data_dir)
    try:
        # Conversations 3 and 4 have no NUL anywhere: the reindex loader takes runs of such
        # conversations' texts in one statement.
        for n in range(5):
            conv = created(f"title {n} \x00 with a NUL" if n == 1 else f"title {n}")
            await store.create_conversation(conv)
            own = texts if n < 3 else [t for t in texts if "\x00" not in t]
            items = [
                message(t, "agent_message" if k % 2 else "user_message") for k, t in enumerate(own)
            ]
            await store.append_items(conv["conversationId"], conv["rootSessionId"], items)
    finally:
        await store.close()


TEXTS = ["plain", "a\x00b", "\x00", 'quote " back \\ slash \\u0000', "tab\t\r\n", "😀 é\u0301", ""]


async def test_reindex_loader_equals_row_by_row(
    data_dir: DataDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await make_corpus(data_dir, TEXTS * 3)
    live = await rebuilt_dump(data_dir, tmp_path)  # threaded loader, chunks with NULs included
    store = await Store.open(data_dir)
    try:
        assert await store.dump_index() == live
        found, _ = await store.list_conversations(search="quote slash")
        assert len(found) == 5
    finally:
        await store.close()
    monkeypatch.setattr(reindex, "_CHUNK", 2)  # many chunks, some with NULs and some without
    assert await rebuilt_dump(data_dir, tmp_path) == live
    monkeypatch.setattr(reindex, "_CHUNK", 8192)  # whole runs of groups in a chunk...
    monkeypatch.setattr(reindex, "_GROUPS_PER_STATEMENT", 2)  # ...cut into statements
    assert await rebuilt_dump(data_dir, tmp_path) == live

    # As if SQLite had no JSON: the loader's probe fails as it would there.
    monkeypatch.setattr(reindex, "_JSON_PROBE", "SELECT value FROM no_json_each('[1]')")

    def finish(loader: reindex._Loader) -> None:
        assert loader._thread is None
        finishes.append(loader)
        real_finish(loader)

    finishes: list[reindex._Loader] = []
    real_finish = reindex._Loader.finish
    monkeypatch.setattr(reindex._Loader, "finish", finish)

    assert await rebuilt_dump(data_dir, tmp_path) == live
    assert len(finishes) == 1


def search_rows(db: Path, word: str) -> list[tuple[str, str]]:
    conn = sqlite3.connect(db)
    try:
        sql = "SELECT rowid, text FROM search WHERE search MATCH ? ORDER BY rowid"
        return conn.execute(sql, (ix.fts_query(word),)).fetchall()
    finally:
        conn.close()


async def test_reindexed_schema_and_search_equal_a_fresh_index(
    data_dir: DataDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await make_corpus(data_dir, TEXTS)
    first = tmp_path / "first.db"
    await reindex.reindex(data_dir, db_path=first)
    fresh = sqlite3.connect(":memory:")
    ix.create_schema(fresh)
    schema = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
    conn = sqlite3.connect(first)
    try:
        assert conn.execute(schema).fetchall() == fresh.execute(schema).fetchall()
        assert conn.execute("INSERT INTO search (search) VALUES ('integrity-check')")
    finally:
        conn.close()
    monkeypatch.setattr(reindex, "_CHUNK", 1)
    monkeypatch.setattr(reindex, "_GROUPS_PER_STATEMENT", 1)
    second = tmp_path / "second.db"
    shutil.copytree(data_dir.root, tmp_path / "copy")
    await reindex.reindex(DataDir(tmp_path / "copy"), db_path=second)
    for word in ("plain", "title", "quote", "é"):
        assert search_rows(first, word) == search_rows(second, word) != []


def test_an_item_with_a_nonsense_type_does_not_stop_a_reindex() -> None:
    from openvaala_server.store.index import ItemStats

    stats = ItemStats()
    stats.add(
        [
            j({"type": "item", "ts": "2026-01-01T00:00:00Z", "item": {"type": ["a", "list"]}}),
            {
                "type": "item",
                "ts": "2026-01-01T00:00:01Z",
                "item": {"type": "user_message", "text": "hi"},
            },
        ]
    )
    assert stats.message_count == 1 and stats.texts == ["hi"]


_values = st.one_of(
    st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2)
)
_items = st.one_of(
    _values,
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.one_of(
                st.sampled_from(["user_message", "agent_message", "tool_call", "tool_result"]),
                _values,
            ),
            "text": st.one_of(st.text(max_size=8), _values),
            # Past twice domain/recall.py's OUTPUT_EDGE too: both paths keep the same ends.
            "output": st.one_of(st.text(max_size=8), st.just("y" * 4001 + "z"), _values),
        },
    ),
)
_records = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.one_of(st.sampled_from(["item", "turn_started"]), _values),
            "ts": st.one_of(st.sampled_from(["2030-01-01", "2031-05-05", "2029-12-31"]), _values),
            "item": _items,
        },
    ),
    max_size=6,
)


@given(batches=st.lists(_records, max_size=3))
def test_item_stats_fast_path_equals_the_checked_one(
    batches: list[list[Record]],
) -> None:
    fast, checked = ix.ItemStats(), ix.ItemStats()
    for records in batches:
        fast.add(records)
        checked._add_checked(records)
    assert fast == checked


def test_item_stats_takes_the_fast_path_for_ordinary_records() -> None:
    stats = ix.ItemStats()
    records: list[Record] = [
        {"type": "item", "ts": "2030-01-02", "item": {"type": "user_message", "text": "hi"}},
        {"type": "item", "ts": "2030-01-01", "item": {"type": "tool_call", "text": "x"}},
        {"type": "item", "ts": "2030-01-03", "item": {"type": "agent_message", "text": ""}},
    ]
    assert stats._add_clean(records)
    assert (stats.message_count, stats.texts, stats.updated_at) == (2, ["hi"], "2030-01-03")


def test_tool_output_is_kept_bounded_for_search_history() -> None:
    stats = ix.ItemStats()
    long = "start " + "y" * 5000 + " end"
    records: list[Record] = [
        {"type": "item", "ts": "2030-01-01", "item": {"type": "tool_result", "output": "short"}},
        {"type": "item", "ts": "2030-01-02", "item": {"type": "tool_result", "output": long}},
    ]
    assert stats._add_clean(records)
    assert stats.message_count == 0 and stats.texts == []
    short, cut = stats.outputs
    assert short == "short" and cut.startswith("start ") and cut.endswith(" end")
    assert len(cut) < 4100
