"""The conversation list (conversation/list): stored summaries, with the fresher status of
the conversations loaded here and where a search matched (docs/design.md "Runtime split by
responsibility")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from openvaala_server import errors
from openvaala_server.domain import snippets
from openvaala_server.protocol import codec
from openvaala_server.runtime.conversation import LiveConversation
from openvaala_server.runtime.ports import Storage
from openvaala_server.store.index import Summary, parse_summaries

if TYPE_CHECKING:
    from openvaala_server.protocol import payloads as p


class Owner(Storage, Protocol):
    """What the list uses of the conversation manager."""

    conversations: dict[str, LiveConversation]


async def list_conversations(
    runtime: Owner, archived: bool, search: str | None, limit: int, cursor: str | None
) -> p.ListResult:
    try:
        rows, next_cursor = await runtime.store_call(
            runtime.store.list_summaries(
                archived=archived, search=search, limit=limit, cursor=cursor
            )
        )
    except ValueError:
        raise errors.InvalidParams(
            '"cursor" is not one this server gave out', param="cursor"
        ) from None
    # With a search, each row that matched in a message says where (docs/protocol.md).
    found = (
        await runtime.store_call(runtime.store.search_snippets([cid for cid, _ in rows], search))
        if search and rows
        else {}
    )
    # Stored summaries go out as they are (no dict per row); only a conversation loaded
    # here has a fresher status than its last finished turn.
    conversations: list[Summary | codec.Fragment] = []
    for cid, text in rows:
        live = runtime.conversations.get(cid)
        status = live.status if live is not None and live.sessions else None
        if status is not None or cid in found:
            [summary] = parse_summaries([text])
            if status is not None:
                summary["status"] = status
            if cid in found:
                summary["snippet"] = snippets.from_marked(found[cid])
            conversations.append(summary)
        else:
            conversations.append(codec.Fragment(text))
    # A pre-encoded row is the same summary on the wire (protocol/payloads.ListResult).
    result: p.ListResult = {"conversations": cast("list[p.ConversationSummary]", conversations)}
    if next_cursor:
        result["nextCursor"] = next_cursor
    return result
