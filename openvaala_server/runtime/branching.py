"""New conversations from an existing one: a fork, a rewind to a message, and undoing the
files a turn changed (docs/design.md "Runtime split by responsibility")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openvaala_server.runtime import history
from openvaala_server.runtime import images as runtime_images
from openvaala_server.runtime.context_view import copy_pins
from openvaala_server.runtime.settings import refuse_while_running

if TYPE_CHECKING:
    from openvaala_server.domain import records as r
    from openvaala_server.protocol import payloads as p
    from openvaala_server.runtime.conversation import LiveConversation

Owner = history.Manager


async def adopt(
    runtime: Owner, created: dict[str, Any], items: list[r.Item], *, images_from: str | None = None
) -> LiveConversation:
    """Write a new conversation that starts with `items` (a fork), and open it. The images
    the items refer to are copied from conversation `images_from` first."""
    cid = created["conversationId"]
    await runtime.store_call(runtime.store.create_conversation(created))
    if images_from is not None:
        await runtime_images.copy(runtime, images_from, cid, items)
    if items:
        await runtime.store_call(runtime.store.append_items(cid, created["rootSessionId"], items))
    return await runtime.open(cid)


async def fork(runtime: Owner, cid: str, up_to_item_id: str | None) -> p.ConversationResult:
    conv = await runtime.open(cid)
    await conv.ensure_history()
    new = await history.fork(runtime, conv, up_to_item_id, pinned=conv.pinned(conv.root))
    await copy_pins(conv, new)
    info = new.info()
    runtime.list_feed.changed(info)
    return {"conversation": info}


async def rewind(
    runtime: Owner, cid: str, message_id: str, restore_files: bool = False, force: bool = False
) -> p.RewindResult:
    conv = await runtime.open(cid)
    await conv.ensure_history()
    items, text = history.rewind_target(conv, message_id)
    files = None
    if restore_files:  # first: a conflict refuses the whole rewind (docs/protocol.md)
        refuse_while_running(conv, "restore files")
        turn_id = next(i.get("turnId") for i in conv.root.items if i["itemId"] == message_id)
        files = await conv.checkpoints.restore_since(turn_id, force)
    new = await history.fork(
        runtime, conv, kind="rewind", items=items, pinned=conv.pinned(conv.root)
    )
    await copy_pins(conv, new)
    # The message's images come back with its text (copied, so the new one serves them).
    images = await runtime_images.carry_over(runtime, conv, new.conversation_id, message_id)
    info = new.info()
    runtime.list_feed.changed(info)
    result: p.RewindResult = {"conversation": info, "composerText": text}
    if images:
        result["composerImages"] = images
    if files is not None:
        result["files"] = files
    return result


async def undo_files(runtime: Owner, cid: str, force: bool) -> p.RestoreResult:
    """Put back the files the last turn that changed any changed (conversation/undo)."""
    conv = await runtime.open(cid)
    refuse_while_running(conv, "undo")
    return await conv.checkpoints.undo_last(force)
