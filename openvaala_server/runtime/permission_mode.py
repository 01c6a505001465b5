"""Switching a conversation's permission mode (docs/security.md, "Permission modes").

The mode is one metadata record (`permission_mode_set`), so it survives a restart; every client
learns of it through `conversation/updated`. A turn that is running meets the new mode at its
next tool call, since each call reads its permissions then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openvaala_server import errors
from openvaala_server.domain import records as r
from openvaala_server.domain.permission_mode import PermissionMode, allowed_modes

if TYPE_CHECKING:
    from openvaala_server.runtime.manager import ConversationManager


async def set_mode(runtime: ConversationManager, cid: str, mode: PermissionMode) -> None:
    conv = await runtime.open(cid)
    await conv.ensure_context()
    root = conv.root
    allowed = allowed_modes(runtime.own_permissions_for(conv, root))
    if mode not in allowed:
        raise errors.InvalidParams(
            f'the permission mode "{mode}" would be wider than the agent {root.agent!r} is '
            f"configured for (its approval asks every write): choose one of {', '.join(allowed)}",
            param="mode",
        )
    if conv.permission_mode == mode:
        return
    if conv.meta is not None:
        await conv.append_meta({"type": r.PERMISSION_MODE_SET, "mode": mode})
    elif conv.pending is not None:
        conv.pending.permission_mode = mode
    conv.publish_updated()
