"""A file too large for the checkpoints from an editor, through the bridge and a real daemon: the
rewind's question says it will be left as it is, and the undo and the rewind say so afterwards,
as a warning (an editor without a plugin shows no command result)."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from tests.lsp.harness import capabilities, command, start_lsp, stop_lsp
from tests.lsp.test_history import CONFIG, _answer, _turn
from tests.support.daemon import Daemon

LEFT = "data.db was too large to keep in a checkpoint"


async def test_undo_and_rewind_name_the_file_too_large_to_keep(daemon_factory: Any) -> None:
    daemon: Daemon = daemon_factory(config=CONFIG)
    work = daemon.workdir
    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        cid = (await command(client, "openvaala.newConversation"))["conversation"]["conversationId"]
        await _turn(client, rec, cid, "run: echo one > a.txt")
        await _turn(client, rec, cid, "run: head -c 11000000 /dev/zero > data.db")
        await _turn(client, rec, cid, "run: head -c 12000000 /dev/zero > data.db")
        undone = await command(client, "openvaala.undo", cid)
        assert undone["restored"] == [] and undone["skipped"][0]["path"] == "data.db"
        await rec.until(lambda: any(LEFT in m.message for m in client.messages))
        note = next(m for m in client.messages if LEFT in m.message)
        assert "undone" in note.message and note.type == types.MessageType.Warning

        read = await command(client, "openvaala.subscribe", cid)
        first = next(
            i for i in read["snapshot"]["sessions"][0]["items"] if i["type"] == "user_message"
        )
        rewinding = asyncio.ensure_future(command(client, "openvaala.rewind", cid, first["itemId"]))
        asked = await _answer(rec, 0, "Restore files")
        assert "a.txt" in asked and LEFT in asked, asked
        rewound = await rewinding
        assert rewound["files"]["restored"] == ["a.txt"] and not (work / "a.txt").exists()
        assert (work / "data.db").stat().st_size == 12_000_000
        await rec.until(lambda: any("files restored" in m.message for m in client.messages))
        told = next(m for m in client.messages if "files restored" in m.message)
        assert LEFT in told.message and told.type == types.MessageType.Warning
    finally:
        await stop_lsp(client)
