"""A conversation id as the user typed it (a unique prefix, docs/design.md "Short ids") made
the full id, by listing the conversations through the daemon, archived ones too."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from openvaala_server.domain.short_ids import FULL_ID, match, normalize
from openvaala_server.protocol import methods

if TYPE_CHECKING:
    from openvaala_server.client.connection import Client
    from openvaala_server.protocol.payloads import ConversationSummary, ListParams

PAGE = 500  # the most `conversation/list` gives at once


async def conversations(
    client: Client, *, archived: bool, search: str | None = None, limit: int | None = None
) -> AsyncIterator[ConversationSummary]:
    """Every conversation (`archived` or active), newest first, page after page; at most
    `limit` when given."""
    params: ListParams = {"archived": archived, "limit": PAGE}
    if search:
        params["search"] = search
    given = 0
    while True:
        result = await client.request(methods.CONVERSATION_LIST, params)
        for row in result["conversations"]:
            if limit is not None and given >= limit:
                return
            given += 1
            yield row
        cursor = result.get("nextCursor")
        if not cursor:
            return
        params["cursor"] = cursor


async def resolve(client: Client, typed: str) -> str:
    """The full id of the one conversation whose id starts with `typed`; IdPrefixError if none
    or several do. A full id is returned as it is (the daemon says if it does not exist)."""
    prefix = normalize(typed)
    if len(prefix) == FULL_ID:
        return prefix
    ids = [
        row["conversationId"]
        for archived in (False, True)
        async for row in conversations(client, archived=archived)
    ]
    return match(prefix, ids)
