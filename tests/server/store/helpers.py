"""Builders shared by the store tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from openvaala_server.domain.ids import new_id
from openvaala_server.domain.records import Item
from openvaala_server.store import index as ix
from openvaala_server.store.paths import DataDir
from openvaala_server.store.reindex import reindex


def created(title: str = "first", **extra: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "conversationId": new_id(),
        "cwd": "/work/project",
        "agent": "coder",
        "model": "gpt",
        "title": title,
        "titleSource": "auto",
        "rootSessionId": new_id(),
        "forkedFrom": None,
        "formatVersion": 1,
    }
    payload.update(extra)
    return payload


def message(text: str, kind: str = "user_message") -> Item:
    return {"itemId": new_id(), "type": kind, "text": text, "status": "completed"}


async def rebuilt_dump(data_dir: DataDir, tmp: Path) -> dict[str, list[ix.Row]]:
    """A fresh index of `data_dir`, built beside it, as a full table dump."""
    db = tmp / f"rebuilt-{new_id()}.db"
    await reindex(data_dir, db_path=db)
    conn = sqlite3.connect(db)
    try:
        return ix.dump(conn)
    finally:
        conn.close()
