"""A conversation whose agent or working directory is gone (moved, or its config edited) says so
in its transcript, naming the command that fixes it, and `openvaala.setAgent` /
`openvaala.setCwd` make it run again."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.lsp.harness import capabilities, command, request, start_lsp, stop_lsp
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.events import new_conversation, run_turn

TWO_AGENTS = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"

[agents.coder]
description = "Writes code"
model = "demo"
"""
AGENT_WARNING = "agent **coder** is not configured here"
CWD_WARNING = "the working directory does not exist"


async def _saved(daemon: Daemon, cwd: Path, **extra: Any) -> str:
    client = await daemon.client(reconnect=False)
    try:
        cid = await new_conversation(client, str(cwd), **extra)
        await run_turn(client, cid, "hello")
    finally:
        await client.close()
    return cid


async def _transcript(client: Any, cid: str) -> str:
    opened = await request(client, "openvaala/subscribe", {"conversationId": cid})
    shown = await request(client, "openvaala/render", {"uri": opened["uri"]})
    return str(shown["text"])


@pytest.mark.parametrize("editor", ["neovim", "visual-studio-code"])
async def test_a_missing_agent_is_shown_and_set_agent_fixes_it(
    editor: str, daemon_factory: Any
) -> None:
    daemon: Daemon = daemon_factory(TWO_AGENTS)
    cid = await _saved(daemon, daemon.workdir, agent="coder")
    daemon.stop()
    daemon.config_path.write_text(TWO_AGENTS.split("[agents.coder]")[0])
    daemon.start()
    client, rec, _ = await start_lsp(daemon, capabilities(editor))
    try:
        text = await _transcript(client, cid)
        assert AGENT_WARNING in text and "openvaala.setAgent" in text
        with pytest.raises(JsonRpcException) as refused:
            await command(client, "openvaala.send", cid, "run: echo hi")
        assert error_data(refused.value)["kind"] == "agent_missing"
        with pytest.raises(JsonRpcException) as unknown:
            await command(client, "openvaala.setAgent", cid, "nobody")
        assert error_data(unknown.value)["kind"] == "agent_missing"
        assert error_data(unknown.value)["available"] == ["default"]

        assert (
            await command(client, "openvaala.setAgent", {"conversationId": cid, "agent": "default"})
            == {}
        )
        await rec.until(lambda: "conversation/updated" in rec.methods(cid))
        text = await _transcript(client, cid)
        assert AGENT_WARNING not in text and "agent **default**" in text
        done = await command(client, "openvaala.prompt", cid, "run: echo hi")
        assert done["status"] == "completed"
    finally:
        await stop_lsp(client)


async def test_a_missing_directory_is_shown_and_set_cwd_fixes_it(
    daemon: Daemon, tmp_path: Path
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    cid = await _saved(daemon, gone)
    shutil.rmtree(gone)
    daemon.restart()
    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        text = await _transcript(client, cid)
        assert CWD_WARNING in text and "openvaala.setCwd" in text
        with pytest.raises(JsonRpcException) as missing:
            await command(client, "openvaala.setCwd", cid, str(tmp_path / "nowhere"))
        assert error_data(missing.value)["kind"] == "cwd_missing"

        moved = tmp_path / "moved here"
        moved.mkdir()
        assert await command(client, "openvaala.setCwd", cid, str(moved)) == {}
        await rec.until(lambda: "conversation/updated" in rec.methods(cid))
        done = await command(client, "openvaala.prompt", cid, "run: pwd")
        assert done["status"] == "completed"
        text = await _transcript(client, cid)
        assert CWD_WARNING not in text
        assert f"\n{moved}\n" in text
    finally:
        await stop_lsp(client)
