"""The daemon's config.toml state put to the editor as `window/showMessage` (docs/editors.md): an
edit with an error (the daemon keeps its last good configuration), a reload, and at connect time an
error made before the editor connected (`initialize`'s `config`, docs/protocol.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from openvaala_server.protocol import methods
from openvaala_server.protocol.json_types import JsonObject

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer


class ConfigStatus:
    def __init__(self, ls: LanguageServer) -> None:
        self.ls = ls

    def on_note(self, method: str, params: JsonObject) -> None:
        if method in (methods.CONFIG_ERROR, methods.CONFIG_RELOADED):
            self.show(params)

    def show(self, status: object) -> None:
        """`status` is a `ConfigState` as the daemon sent it (a note's params, or `initialize`'s
        `config`, absent from an older daemon): read defensively."""
        if not isinstance(status, dict):
            return
        message = str(status.get("message") or "")
        if status.get("state") == "error":
            kind, text = types.MessageType.Error, f"OpenVaala: config error: {message}"
        else:
            kind, text = types.MessageType.Info, f"OpenVaala: {message}"
        self.ls.window_show_message(types.ShowMessageParams(type=kind, message=text))

    def show_if_broken(self, status: object) -> None:
        """At connect time only an error is news."""
        if isinstance(status, dict) and status.get("state") == "error":
            self.show(status)
