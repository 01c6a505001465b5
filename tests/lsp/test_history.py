"""Checkpoints and the tree from an editor, through the bridge and a real daemon: `openvaala.undo`,
`openvaala.rewind` asking (window/showMessageRequest) whether to restore files and whether to
overwrite the user's edit, `openvaala.tree`."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from tests.lsp.harness import Recorder, capabilities, command, start_lsp, stop_lsp
from tests.support.daemon import DEFAULT_CONFIG, Daemon

CONFIG = DEFAULT_CONFIG + 'approval = "never"\n'


async def _turn(client: Any, rec: Recorder, cid: str, text: str) -> None:
    before = rec.methods(cid).count("turn/ended")
    await command(client, "openvaala.send", cid, text)
    await rec.until(lambda: rec.methods(cid).count("turn/ended") > before)


async def _answer(rec: Recorder, index: int, title: str) -> str:
    await rec.until(lambda: len(rec.prompts) > index)
    prompt, answer = rec.prompts[index]
    answer.set_result(types.MessageActionItem(title=title))
    return prompt.message


async def test_undo_rewind_with_questions_and_tree(daemon_factory: Any) -> None:
    daemon: Daemon = daemon_factory(config=CONFIG)
    work = daemon.workdir
    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        cid = (await command(client, "openvaala.newConversation"))["conversation"]["conversationId"]
        await _turn(client, rec, cid, "run: echo one > a.txt")
        await _turn(client, rec, cid, "run: echo two > b.txt")
        undone = await command(client, "openvaala.undo", cid)
        assert undone["restored"] == ["b.txt"] and not (work / "b.txt").exists()

        (work / "a.txt").write_text("my edit\n")
        read = await command(client, "openvaala.subscribe", cid)
        first = next(
            i for i in read["snapshot"]["sessions"][0]["items"] if i["type"] == "user_message"
        )
        rewinding = asyncio.ensure_future(command(client, "openvaala.rewind", cid, first["itemId"]))
        asked = await _answer(rec, 0, "Restore files")
        assert "restore the files" in asked and "a.txt" in asked
        asked = await _answer(rec, 1, "Overwrite them")
        assert "changed since the agent wrote them: a.txt" in asked
        rewound = await rewinding
        assert rewound["files"]["restored"] == ["a.txt"] and not (work / "a.txt").exists()
        assert rewound["composerText"] == "run: echo one > a.txt"

        tree = await command(client, "openvaala.tree", cid)
        [child] = tree["root"]["children"]
        assert child["kind"] == "rewind" and child["uri"] == rewound["uri"]
    finally:
        await stop_lsp(client)


async def test_undo_and_a_rewind_say_what_they_restored_and_what_they_could_not(
    daemon_factory: Any,
) -> None:
    """An editor without a plugin shows no command result: the bridge says what an undo put back
    and, as a warning, that a rewind in a fork whose parent was deleted could not put back the
    parent's turn (`missingTurnIds`)."""
    daemon: Daemon = daemon_factory(config=CONFIG)
    work = daemon.workdir
    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        parent = (await command(client, "openvaala.newConversation"))["conversation"]
        pid = parent["conversationId"]
        await _turn(client, rec, pid, "run: echo one > a.txt")
        await _turn(client, rec, pid, "run: echo two > b.txt")
        undone = await command(client, "openvaala.undo", pid)
        assert undone["restored"] == ["b.txt"]
        await rec.until(lambda: any("undone" in m.message for m in client.messages))
        note = next(m for m in client.messages if "undone" in m.message)
        assert "b.txt" in note.message and note.type == types.MessageType.Info

        fork = (await command(client, "openvaala.fork", pid))["conversation"]["conversationId"]
        await _turn(client, rec, fork, "run: echo three > c.txt")
        read = await command(client, "openvaala.subscribe", fork)
        first = next(
            i for i in read["snapshot"]["sessions"][0]["items"] if i["type"] == "user_message"
        )
        await command(client, "openvaala.unsubscribe", pid)
        other = await daemon.client()
        try:
            await other.request("conversation/delete", {"conversationId": pid})
        finally:
            await other.close()
        rewound = await command(client, "openvaala.rewind", fork, first["itemId"], True)
        assert rewound["files"]["restored"] == ["c.txt"] and rewound["files"]["missingTurnIds"]
        assert (work / "a.txt").exists() and not (work / "c.txt").exists()
        await rec.until(lambda: any("could not be restored" in m.message for m in client.messages))
        warning = next(m for m in client.messages if "could not be restored" in m.message)
        assert warning.type == types.MessageType.Warning and "c.txt" in warning.message
    finally:
        await stop_lsp(client)
