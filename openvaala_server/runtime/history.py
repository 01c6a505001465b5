"""Fork, rewind and reading a history that a fork shares with the conversation it came from.

Fork copies the root agent's finished history into a new conversation: not subagents, waiting
input or the archived state. A fork made after a compaction copies only what its model sees (the
latest summary and what follows it) and refers to the original for the older items, so the two
move together; `root_history` joins them back for reading. Rewind is a fork that stops just before
one of the user's messages and gives that message's text back for the composer.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Literal, Protocol

from openvaala_server import errors
from openvaala_server.domain import records as r
from openvaala_server.domain import tree as conversation_tree
from openvaala_server.domain.context import latest_summary_index
from openvaala_server.domain.ids import new_id
from openvaala_server.domain.joined import joined_page, list_page
from openvaala_server.domain.plan import plan_in
from openvaala_server.domain.title import TITLE_LIMIT
from openvaala_server.protocol import payloads as wire
from openvaala_server.runtime.conversation import LiveConversation
from openvaala_server.runtime.ports import Services

if TYPE_CHECKING:
    from openvaala_server.runtime.ports import Conversation


class Manager(Services, Protocol):
    """What forks and history reads use of the conversation manager."""

    conversations: dict[str, LiveConversation]

    async def open(self, cid: str) -> LiveConversation: ...

    async def adopt(
        self, created: dict[str, Any], items: list[r.Item], *, images_from: str | None = None
    ) -> LiveConversation: ...


def finished_items(conv: LiveConversation) -> list[r.Item]:
    """The root's items, without those of a turn still running."""
    root = conv.root
    running = root.turn.turn_id if root.turn else None
    return [i for i in root.items if running is None or i.get("turnId") != running]


def _cut_after(items: list[r.Item], item_id: str) -> list[r.Item]:
    for index, item in enumerate(items):
        if item["itemId"] == item_id:
            return items[: index + 1]
    raise errors.NotFound(f"no item {item_id} in this conversation's history", param="upToItemId")


async def fork(
    runtime: Manager,
    conv: LiveConversation,
    up_to_item_id: str | None = None,
    *,
    kind: Literal["fork", "rewind"] = "fork",
    items: list[r.Item] | None = None,
    pinned: list[str] | tuple[str, ...] = (),
) -> LiveConversation:
    if conv.meta is None:
        raise errors.NotFound("this conversation has no messages yet: nothing to fork")
    selected = items if items is not None else finished_items(conv)
    if up_to_item_id is not None and items is None:
        selected = _cut_after(selected, up_to_item_id)
    forked_from: r.ForkedFrom = {
        "conversationId": conv.conversation_id,
        "kind": kind,
        "upToItemId": selected[-1]["itemId"] if selected else None,
    }
    planned = selected  # before a compaction's cut: the plan may be older than the summary
    at = latest_summary_index(selected)
    older_from = conv.meta.forked_from.get("olderHistory") if conv.meta.forked_from else None
    if at is not None:
        # After a compaction: copy what the model sees, refer to the original for the rest.
        summary = selected[at]
        covers = summary.get("coversUpTo")
        start = next((i + 1 for i, item in enumerate(selected) if item["itemId"] == covers), at)
        forked_from["olderHistory"] = {
            "conversationId": conv.conversation_id,
            "upToItemId": covers,
        }
        # Pinned items the summary covers are sent after it: copied too, before it as in the
        # original (docs/protocol.md).
        kept = [i for i in selected[:start] if i["itemId"] in pinned]
        selected = [*kept, summary, *(i for i in selected[start:] if i is not summary)]
    elif older_from:
        forked_from["olderHistory"] = older_from  # the original's own older part, still elsewhere
    new_root = new_id()
    copied: list[r.Item] = [{**item, "sessionId": new_root} for item in selected]
    title = _fork_title(conv.meta.title, kind)
    created = {
        "conversationId": new_id(),
        "cwd": conv.meta.cwd,
        "agent": conv.meta.agent,
        "model": conv.root.model,
        "title": title,
        "titleSource": "user" if conv.meta.title_source == "user" else "auto",
        "rootSessionId": new_root,
        "forkedFrom": forked_from,
        "formatVersion": r.FORMAT_VERSION,
    }
    if conv.root.model_chosen:  # a copy keeps the user's choice of model (docs/storage.md)
        created["modelChosen"] = True
    new = await runtime.adopt(created, copied, images_from=conv.conversation_id)
    if conv.permission_mode is not None:
        # A copy keeps the user's narrowing: a rewind of a plan-mode conversation must not
        # come back writing (docs/security.md, "Permission modes").
        await new.append_meta({"type": r.PERMISSION_MODE_SET, "mode": conv.permission_mode})
    plan = plan_in(planned)  # the plan as it was where the copy ends (docs/protocol.md, Plan)
    if plan is not None:
        await new.set_plan(new.root, plan)
    return new


def _fork_title(title: str, kind: str) -> str:
    """` (fork)` or ` (rewind)` after the title (once): the list tells them apart."""
    suffix = f" ({kind})"
    base = title.removesuffix(" (fork)").removesuffix(" (rewind)")
    if len(base) + len(suffix) > TITLE_LIMIT + 20:
        base = base[: TITLE_LIMIT + 20 - len(suffix) - 1].rstrip() + "…"
    return base + suffix


def rewind_target(conv: LiveConversation, message_id: str) -> tuple[list[r.Item], str]:
    """The history before one of the user's messages, and that message's text."""
    items = finished_items(conv)
    for index, item in enumerate(items):
        if item["itemId"] == message_id:
            if item.get("type") != r.USER_MESSAGE or item.get("origin", "user") != "user":
                raise errors.InvalidParams(
                    "rewind goes back to one of your own messages", param="messageId"
                )
            return items[:index], str(item.get("text") or "")
    raise errors.NotFound(f"no message {message_id} in this conversation", param="messageId")


async def root_history(runtime: Manager, conv: Conversation) -> list[r.Item]:
    """The root's whole history: the original's older items (for a fork after compaction),
    then this conversation's own. When the original is not here, a notice says where it is."""
    local = conv.root.items
    meta = conv.meta
    older = meta.forked_from.get("olderHistory") if meta and meta.forked_from else None
    if not older:
        return local
    source_id = str(older.get("conversationId"))
    try:
        source = await runtime.open(source_id)
    except errors.OpenVaalaError:
        return [missing_history_notice(conv, source_id), *local]
    await source.ensure_history()
    source_items = await root_history(runtime, source)
    cut = older.get("upToItemId")
    if cut and any(i["itemId"] == cut for i in source_items):
        source_items = _cut_after(source_items, str(cut))
    # A pinned item the fork copied (its model sees it after the summary) shows once, in place.
    earlier: list[r.Item] = [{**i, "fromConversationId": source_id} for i in source_items]
    seen = {i["itemId"] for i in earlier}
    return [*earlier, *(i for i in local if i["itemId"] not in seen)]


async def root_page(
    runtime: Manager, conv: Conversation, before: str | None, limit: int
) -> wire.ReadResult:
    """One page of a fork's root history joined with its original's older part, without
    building the join (domain/joined.py). A chain of forks after compactions, or an original
    that is not here, is joined whole as `root_history` does."""
    meta = conv.meta
    older = meta.forked_from.get("olderHistory") if meta and meta.forked_from else None
    source = None
    if older:
        with contextlib.suppress(errors.OpenVaalaError):  # not here: the notice, below
            source = await runtime.open(str(older.get("conversationId")))
    if source is None or _older_of(source):
        page = list_page(await root_history(runtime, conv), before, limit)
    else:
        source.residency.read()  # paged a while: kept in memory meanwhile, as the fork is
        await source.ensure_history()
        cut = older.get("upToItemId") if older else None
        page = joined_page(
            source.root.items,
            source.root.positions,
            str(cut) if cut else None,
            conv.root.items,
            conv.root.positions,
            source.conversation_id,
            before,
            limit,
        )
    if page is None:
        raise errors.NotFound(f"no item {before} in this session", param="beforeItem")
    return {"items": page.items, "hasMore": page.has_more}


def _older_of(conv: Conversation) -> object:
    forked = conv.meta.forked_from if conv.meta else None
    return forked.get("olderHistory") if forked else None


def missing_history_notice(conv: Conversation, source_id: str) -> r.Item:
    return {
        "itemId": "0" * 32,
        "type": r.NOTICE,
        "kind": "history_elsewhere",
        "sessionId": conv.root_session_id,
        "turnId": None,
        "createdAt": conv.meta.created_at if conv.meta else r.utc_now(),
        "status": r.COMPLETED,
        "text": (
            f"The older history of this conversation is in conversation {source_id}, which is "
            "not on this machine. Copy that conversation's directory here too to see it."
        ),
    }


async def tree(runtime: Manager, cid: str) -> wire.TreeResult:
    """The conversation tree `cid` belongs to (docs/protocol.md, conversation/tree)."""
    store = runtime.store
    summaries = {s["conversationId"]: s for s in await runtime.store_call(store.fork_summaries())}
    current: str | None = cid
    seen: set[str] = set()
    while current is not None and current not in seen:  # up the parents, fetching non-forks
        seen.add(current)
        summary = summaries.get(current)
        if summary is None:
            summary = await runtime.store_call(store.get_summary(current))
            if summary is None:
                break
            summaries[current] = summary
        current = conversation_tree.parent_of(summary)
    if cid not in summaries:
        raise errors.NotFound(
            f"no saved conversation {cid} (a conversation is saved with its first message)",
            param="conversationId",
        )
    for live_id, live in runtime.conversations.items():
        if live_id in summaries and live.sessions:
            summaries[live_id] = {**summaries[live_id], "status": live.status}
    root = conversation_tree.root_of(cid, summaries)
    return {"conversationId": cid, "root": conversation_tree.build(root, summaries)}
