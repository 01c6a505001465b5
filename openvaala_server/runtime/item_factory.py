"""A new item of a turn, in progress, stamped with its id and time (docs/storage.md, items)."""

from __future__ import annotations

from typing import cast

from openvaala_server.domain import records as r
from openvaala_server.domain.ids import new_id


def new_item(item_type: str, session_id: str, turn_id: str | None, **fields: object) -> r.Item:
    item: r.Item = {
        "itemId": new_id(),
        "type": item_type,
        "sessionId": session_id,
        "turnId": turn_id,
        "createdAt": r.utc_now(),
        "status": r.IN_PROGRESS,
    }
    item.update(cast(r.Item, fields))  # the callers name fields of `r.Item`
    return item
