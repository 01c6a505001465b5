"""An in-memory `ConversationStore` (openvaala_server/store/interface.py) for unit tests of the
runtime: the same records, stamping, folding and summaries as the real store, without journals
on disk or the SQLite index.

Records are kept as JSON (orjson) and parsed on every read, as the real store reads its journal
files: a read hands out new objects, and anything the runtime writes that JSON cannot hold fails
here as it would on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import orjson

from openvaala_server.domain import meta as m
from openvaala_server.domain import records as r
from openvaala_server.domain import snippets
from openvaala_server.domain.context_tail import context_start
from openvaala_server.domain.ids import is_valid_id
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.store import index as ix
from openvaala_server.store.index import Summary
from openvaala_server.store.paths import DataDir, FormatTooNew, InvalidId, NotFound
from openvaala_server.store.tail import Tail


@dataclass
class _Conversation:
    metadata: list[bytes] = field(default_factory=list)
    sessions: dict[str, list[bytes]] = field(default_factory=dict)
    checkpoints: list[bytes] = field(default_factory=list)
    stats: ix.ItemStats = field(default_factory=ix.ItemStats)


def _check_id(value: object) -> str:
    if not isinstance(value, str) or not is_valid_id(value):
        raise InvalidId(f"invalid id {value!r}")
    return value


class MemoryStore:
    """What `Store` keeps, in dicts. `data_dir` still names a directory (a test's temporary
    one): attachments and file snapshots are written there by the runtime, not by the store."""

    def __init__(self, data_dir: DataDir) -> None:
        self._data_dir = data_dir
        self._conversations: dict[str, _Conversation] = {}
        # Set to make every append fail as a full disk does (the record is not kept).
        self.failing: OSError | None = None

    @property
    def data_dir(self) -> DataDir:
        return self._data_dir

    def halt_writes(self, reason: str) -> None:
        self.failing = OSError(reason)

    # --- records -----------------------------------------------------------------------------

    def _append(self, journal: list[bytes], payloads: Sequence[JsonMapping]) -> list[r.Record]:
        if self.failing is not None:
            raise self.failing
        for payload in payloads:
            if not isinstance(payload.get("type"), str):
                raise ValueError("every record needs a string 'type'")
        ts = r.utc_now()
        stamped = [
            {"seq": len(journal) + n + 1, "ts": ts, **payload} for n, payload in enumerate(payloads)
        ]
        journal += [orjson.dumps(record) for record in stamped]
        return [orjson.loads(line) for line in journal[len(journal) - len(stamped) :]]

    @staticmethod
    def _read(journal: list[bytes]) -> list[r.Record]:
        return [orjson.loads(line) for line in journal]

    def _existing(self, cid: str) -> _Conversation:
        conv = self._conversations.get(_check_id(cid))
        if conv is None:
            raise NotFound(f"no conversation {cid}")
        return conv

    # --- conversations -----------------------------------------------------------------------

    def exists(self, cid: str) -> bool:
        return is_valid_id(cid) and cid in self._conversations

    async def create_conversation(self, created: JsonMapping) -> m.ConversationMeta:
        cid = _check_id(created.get("conversationId"))
        _check_id(created.get("rootSessionId"))
        if cid in self._conversations:
            raise FileExistsError(f"conversation {cid} exists")
        payload = {**created, "type": r.CONVERSATION_CREATED}
        payload.setdefault("formatVersion", r.FORMAT_VERSION)
        if payload["formatVersion"] != r.FORMAT_VERSION:
            raise FormatTooNew(f"this OpenVaala writes format {r.FORMAT_VERSION} only")
        conv = self._conversations[cid] = _Conversation()
        stamped = self._append(conv.metadata, [payload])
        return m.created_from(stamped[0])

    async def append_metadata(self, cid: str, payloads: Sequence[JsonMapping]) -> list[r.Record]:
        return self._append(self._existing(cid).metadata, payloads)

    async def load_meta(self, cid: str) -> m.ConversationMeta | None:
        conv = self._conversations.get(_check_id(cid))
        if conv is None:
            return None
        meta, _skipped = ix.fold_conversation(self._read(conv.metadata))
        return meta

    async def delete_conversation(self, cid: str) -> None:
        self._existing(cid)
        del self._conversations[cid]

    # --- items -------------------------------------------------------------------------------

    async def append_items(self, cid: str, sid: str, items: list[r.Item]) -> None:
        conv = self._existing(cid)
        journal = conv.sessions.setdefault(_check_id(sid), [])
        conv.stats.add(self._append(journal, [{"type": r.ITEM, "item": it} for it in items]))

    async def read_all_items(self, cid: str, sid: str) -> list[r.Item]:
        journal = self._existing(cid).sessions.get(sid, [])
        return [record["item"] for record in self._read(journal) if record["type"] == r.ITEM]

    async def read_last_pages(
        self, cid: str, sids: Sequence[str], limit: int
    ) -> dict[str, tuple[list[r.Item], bool]]:
        return {sid: await self.read_items(cid, sid, limit=limit) for sid in sids}

    async def read_context(
        self, cid: str, sid: str, pinned: Collection[str], at_least: int
    ) -> Tail:
        items = await self.read_all_items(cid, sid)
        start = min(context_start(items, pinned), max(0, len(items) - at_least))
        return Tail(items[start:], start, 0)

    async def read_items(
        self, cid: str, sid: str, *, before_item: str | None = None, limit: int | None = None
    ) -> tuple[list[r.Item], bool]:
        items = await self.read_all_items(cid, sid)
        end = len(items)
        if before_item is not None:
            ids = [item.get("itemId") for item in items]
            if before_item not in ids:
                raise NotFound(f"no item {before_item}")
            end = ids.index(before_item)
        start = 0 if limit is None else max(0, end - limit)
        return items[start:end], start > 0

    # --- checkpoints -------------------------------------------------------------------------

    async def append_checkpoints(self, cid: str, payloads: Sequence[JsonMapping]) -> None:
        self._append(self._existing(cid).checkpoints, payloads)

    async def read_checkpoints(self, cid: str) -> list[r.Record]:
        return self._read(self._existing(cid).checkpoints)

    # --- listing and search ------------------------------------------------------------------

    async def index_new(
        self, cid: str, read: Callable[[], tuple[m.ConversationMeta, ix.ItemStats] | None]
    ) -> None:
        raise NotImplementedError("imports move directories: test them against the real store")

    def _summary(self, cid: str, conv: _Conversation) -> Summary:
        """The ConversationSummary the index computes (index.SUMMARY_JSON), from the records."""
        meta, _skipped = ix.fold_conversation(self._read(conv.metadata))
        (
            _id,
            title,
            cwd,
            agent,
            model,
            created_at,
            updated_at,
            archived,
            message_count,
            turn_count,
            last_status,
            _forked,
        ) = ix.conversation_row(meta, conv.stats.message_count, conv.stats.updated_at)
        return {
            "conversationId": cid,
            "title": title,
            "cwd": cwd,
            "agent": agent,
            "model": model,
            "createdAt": created_at,
            "updatedAt": updated_at,
            "archived": bool(archived),
            "status": "idle" if last_status == "completed" else last_status,
            "messageCount": message_count,
            "turnCount": turn_count,
            "forkedFrom": meta.forked_from,
        }

    def _matches(self, conv: _Conversation, summary: Summary, search: str) -> bool:
        texts = [str(summary["title"]), *conv.stats.texts]
        words = search.lower().split()
        return all(
            any(token.startswith(word) for text in texts for token in text.lower().split())
            for word in words
        )

    async def list_conversations(
        self,
        *,
        archived: bool = False,
        search: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[list[Summary], str | None]:
        rows, next_cursor = await self.list_summaries(
            archived=archived, search=search, limit=limit, cursor=cursor
        )
        return ix.parse_summaries([text for _cid, text in rows]), next_cursor

    async def list_summaries(
        self,
        *,
        archived: bool = False,
        search: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[list[tuple[str, str]], str | None]:
        summaries = [
            summary
            for cid, conv in self._conversations.items()
            if (summary := self._summary(cid, conv))["archived"] == archived
            and (not search or self._matches(conv, summary, search))
        ]
        summaries.sort(key=lambda s: (s["updatedAt"], s["conversationId"]), reverse=True)
        if cursor is not None:
            after = ix.decode_cursor(cursor)  # ValueError for one this store did not give
            summaries = [s for s in summaries if (s["updatedAt"], s["conversationId"]) < after]
        page = summaries[: max(0, limit)]
        more = len(summaries) > len(page) and page
        next_cursor = (
            ix.encode_cursor(page[-1]["updatedAt"], page[-1]["conversationId"]) if more else None
        )
        rows = [(s["conversationId"], orjson.dumps(s).decode()) for s in page]
        return rows, next_cursor

    async def get_summary(self, cid: str) -> Summary | None:
        conv = self._conversations.get(_check_id(cid))
        return None if conv is None else self._summary(cid, conv)

    async def fork_summaries(self) -> list[Summary]:
        return [
            summary
            for cid, conv in self._conversations.items()
            if (summary := self._summary(cid, conv))["forkedFrom"] is not None
        ]

    async def running_conversations(self) -> list[str]:
        return [
            cid
            for cid, conv in self._conversations.items()
            if ix.fold_conversation(self._read(conv.metadata))[0].running_turns()
        ]

    async def search_snippets(self, cids: list[str], search: str) -> dict[str, str]:
        """The first matching message of each conversation, whole, its matched words marked."""
        words = search.lower().split()
        found: dict[str, str] = {}
        for cid in cids:
            conv = self._conversations.get(_check_id(cid))
            for text in conv.stats.texts if conv and words else ():
                tokens = text.split()
                if all(any(t.lower().startswith(w) for t in tokens) for w in words):
                    found[cid] = " ".join(
                        f"{snippets.OPEN}{t}{snippets.CLOSE}"
                        if any(t.lower().startswith(w) for w in words)
                        else t
                        for t in tokens
                    )
                    break
        return found

    async def search_messages(self, cids: list[str], search: str, limit: int) -> list[str]:
        words = search.lower().split()
        found: list[str] = []
        for cid in cids:
            conv = self._conversations.get(_check_id(cid))
            for text in [*conv.stats.texts, *conv.stats.outputs] if conv else ():
                tokens = text.lower().split()
                if words and all(any(t.startswith(w) for t in tokens) for w in words):
                    found.append(text)
        return list(dict.fromkeys(found))[: max(0, limit)]
