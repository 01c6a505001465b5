"""What the runtime needs of the store: the one interface both stores implement.

`store.store.Store` (journals on disk plus the SQLite index) is the daemon's; unit tests run the
runtime on an in-memory one (tests/support/memory_store.py, docs/design.md "Fast core tests").
The runtime is typed against this protocol, so mypy checks that both keep to it and that the
runtime uses nothing else (the daemon's start-up and `reindex` use `Store` itself).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Protocol

from openvaala_server.domain import meta as m
from openvaala_server.domain import records as r
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.store.index import ItemStats, Summary
from openvaala_server.store.paths import DataDir
from openvaala_server.store.tail import Tail


class ConversationStore(Protocol):
    @property
    def data_dir(self) -> DataDir:
        """Where attachments and file snapshots live, beside what the store keeps."""
        ...

    def halt_writes(self, reason: str) -> None:
        """Refuse every later write with `reason` (the data directory was replaced)."""
        ...

    # --- conversations ---------------------------------------------------------------------

    def exists(self, cid: str) -> bool: ...

    async def create_conversation(self, created: JsonMapping) -> m.ConversationMeta:
        """Create a conversation from a `conversation_created` payload (durable on return)."""
        ...

    async def append_metadata(self, cid: str, payloads: Sequence[JsonMapping]) -> list[r.Record]:
        """Append metadata records (durable on return); the records stamped with seq and ts."""
        ...

    async def load_meta(self, cid: str) -> m.ConversationMeta | None:
        """The conversation folded from its metadata records; None if there is none."""
        ...

    async def delete_conversation(self, cid: str) -> None: ...

    # --- items -----------------------------------------------------------------------------

    async def append_items(self, cid: str, sid: str, items: list[r.Item]) -> None:
        """Append finished items to a session's history (durable on return)."""
        ...

    async def read_all_items(self, cid: str, sid: str) -> list[r.Item]: ...

    async def read_items(
        self, cid: str, sid: str, *, before_item: str | None = None, limit: int | None = None
    ) -> tuple[list[r.Item], bool]:
        """The last `limit` items before `before_item`, and whether more exist before them."""
        ...

    async def read_context(
        self, cid: str, sid: str, pinned: Collection[str], at_least: int
    ) -> Tail:
        """The items from where the session's model context begins (or its last `at_least`,
        if earlier) to the end, and how many come before them (store/tail.py)."""
        ...

    async def read_last_pages(
        self, cid: str, sids: Sequence[str], limit: int
    ) -> dict[str, tuple[list[r.Item], bool]]:
        """`read_items(cid, sid, limit=limit)` of each of `sids`, by session id."""
        ...

    # --- checkpoints -----------------------------------------------------------------------

    async def append_checkpoints(self, cid: str, payloads: Sequence[JsonMapping]) -> None: ...

    async def read_checkpoints(self, cid: str) -> list[r.Record]: ...

    # --- listing and search ----------------------------------------------------------------

    async def index_new(
        self, cid: str, read: Callable[[], tuple[m.ConversationMeta, ItemStats] | None]
    ) -> None:
        """List a conversation whose directory was just moved into place (an import)."""
        ...

    async def list_conversations(
        self,
        *,
        archived: bool = False,
        search: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[list[Summary], str | None]: ...

    async def list_summaries(
        self,
        *,
        archived: bool = False,
        search: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[list[tuple[str, str]], str | None]:
        """(conversation id, ConversationSummary JSON) pairs, newest first, and the next
        cursor; ValueError for a cursor this store did not give out."""
        ...

    async def get_summary(self, cid: str) -> Summary | None: ...

    async def fork_summaries(self) -> list[Summary]:
        """The summary of every fork and rewind."""
        ...

    async def running_conversations(self) -> list[str]:
        """Conversations with a turn that never ended (cut by a crash or a kill)."""
        ...

    async def search_messages(self, cids: list[str], search: str, limit: int) -> list[str]:
        """Message texts of these conversations matching every word of `search` (as prefixes)."""
        ...

    async def search_snippets(self, cids: list[str], search: str) -> dict[str, str]:
        """Per conversation id, a short excerpt of its best message text matching `search`,
        each match between `domain.snippets.OPEN` and `CLOSE`; none for a title-only match."""
        ...
