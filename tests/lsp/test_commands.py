"""Every action as `workspace/executeCommand`, for editors without a plugin."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.lsp.harness import Recorder, capabilities, command, request, start_lsp, stop_lsp
from tests.support.daemon import Daemon

REQUIRED = {
    "openvaala.send",
    "openvaala.compact",
    "openvaala.fork",
    "openvaala.rewind",
    "openvaala.interrupt",
    "openvaala.newConversation",
}


async def _turn(client: LanguageClient, rec: Recorder, cid: str, text: str) -> None:
    before = rec.methods(cid).count("turn/ended")
    sent = await command(client, "openvaala.send", cid, text)
    assert sent["disposition"] == "started"
    await rec.until(lambda: rec.methods(cid).count("turn/ended") > before)


async def test_compact_fork_and_rewind_as_commands(editor: str, daemon: Daemon) -> None:
    client, rec, init = await start_lsp(daemon, capabilities(editor))
    try:
        provider = init.capabilities.execute_command_provider
        assert provider is not None and set(provider.commands) >= REQUIRED

        new = await command(client, "openvaala.newConversation")
        cid = new["conversation"]["conversationId"]
        await _turn(client, rec, cid, "first question")
        await _turn(client, rec, cid, "second question")

        compacted = await command(client, "openvaala.compact", {"conversationId": cid})
        assert compacted["compacted"] is True
        await rec.until(lambda: "compaction/completed" in rec.methods(cid))
        assert "compaction/started" in rec.methods(cid)

        forked = await command(client, "openvaala.fork", cid)
        fork_id = forked["conversation"]["conversationId"]
        assert fork_id != cid and forked["uri"] == f"openvaala://conversation/{fork_id}"
        # The editor was asked to show the new conversation.
        assert [d.uri for d in client.shown_documents] == [forked["uri"]]

        history = await request(client, "openvaala/subscribe", {"conversationId": cid})
        root = history["snapshot"]["sessions"][0]
        second = next(
            i
            for i in root["items"]
            if i["type"] == "user_message" and i["text"] == "second question"
        )
        rewound = await command(client, "openvaala.rewind", cid, second["itemId"])
        assert rewound["composerText"] == "second question"
        await rec.until(lambda: rec.composer)
        assert rec.composer[-1]["text"] == "second question"
        assert rec.composer[-1]["uri"] == rewound["uri"]
        shown = await request(client, "openvaala/render", {"uri": rewound["uri"]})
        assert "first question" in shown["text"] and "second question" not in shown["text"]

        stopped = await command(client, "openvaala.interrupt", cid)
        assert stopped == {"interrupted": False}
    finally:
        await stop_lsp(client)


@pytest.mark.parametrize("editor", ["visual-studio-code"])
async def test_commands_take_positional_or_object_arguments(
    lsp: tuple[LanguageClient, Recorder], daemon: Daemon
) -> None:
    client, _rec = lsp
    new = await command(client, "openvaala.newConversation", {"cwd": str(daemon.workdir)})
    cid = new["conversation"]["conversationId"]
    assert new["conversation"]["cwd"] == str(daemon.workdir)
    result: Any = await command(
        client, "openvaala.prompt", {"conversationId": cid, "text": "hi", "mode": "steer"}
    )
    assert result["status"] == "completed"
    usage = await command(client, "openvaala.usage", cid)
    assert usage["used"] == result["usage"]["used"]
    tree = await command(client, "openvaala.agents", cid)
    assert tree["sessions"][0]["sessionId"] == result["sessionId"]
