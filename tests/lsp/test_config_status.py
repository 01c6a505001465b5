"""The editor is told of a config.toml typo (window/showMessage), also one made before it
connected, and of the reload once the file is fixed. A real daemon, the file rewritten."""

from __future__ import annotations

from lsprotocol import types

from tests.lsp.harness import capabilities, start_lsp, stop_lsp
from tests.support.daemon import Daemon
from tests.support.events import collect_until, method_is


async def test_config_errors_and_reloads_are_shown_in_the_editor(daemon: Daemon) -> None:
    good = daemon.config_path.read_text()
    python = await daemon.client("watcher")
    try:  # broken before the editor connects
        daemon.config_path.write_text(good.replace("[agents.default]", "[agents.default]\nx = 1"))
        await collect_until(python, method_is("config/error"))
    finally:
        await python.close()

    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        shown = await rec.until(lambda: client.messages)
        assert shown[0].type == types.MessageType.Error
        assert "config error" in shown[0].message
        assert "agents.default.x: unknown key" in shown[0].message

        daemon.config_path.write_text(good + '\n[models.second]\nprovider = "demo"\n')
        shown = await rec.until(lambda: len(client.messages) > 1)
        last = client.messages[-1]
        assert last.type == types.MessageType.Info and "models changed" in last.message
    finally:
        await stop_lsp(client)
