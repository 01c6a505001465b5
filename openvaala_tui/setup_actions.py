"""`openvaala setup` from the TUI: offered while only the demo model is configured, never forced
(docs/configuration.md, "Setting up with `openvaala setup`")."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys

from textual.app import SuspendNotSupported

from openvaala_server.client.remote import terminal_command
from openvaala_server.protocol import methods
from openvaala_server.setup.status import EXIT_OK, EXIT_TEST_FAILED
from openvaala_tui.actions import CommandsMixin

OFFER = (
    "No model is configured yet: the offline demo model answers for now. "
    "/setup picks a provider (OpenAI, Anthropic, a compatible server or Ollama), checks the key "
    "and writes config.toml; or edit it by hand (docs/configuration.md)."
)


class SetupMixin(CommandsMixin):
    setup_offer = ""  # shown on the first screen (the welcome) while it is there

    def show_welcome(self) -> None:
        raise NotImplementedError

    async def offer_setup(self) -> None:
        """Say how to configure a model when the daemon has none but the demo: on the first
        screen, which goes away with the first message (the offer never stands in the way)."""
        result = await self.call(methods.MODELS_LIST, {})
        models = result.get("models") or []
        if all(m.get("provider") == "demo" for m in models):
            self.setup_offer = OFFER
            self.show_welcome()

    async def cmd_setup(self, arg: str) -> None:
        """Run `openvaala setup` (with `arg` as its flags, if any) in this terminal; the daemon
        reloads what it writes."""
        try:
            extra = shlex.split(arg)
        except ValueError as exc:
            await self.local_notice(f"/setup: cannot read its flags: {exc}", error=True)
            return
        command = self._setup_command(extra)
        try:
            with self.suspend():
                # In a thread: the connection to the daemon keeps being served meanwhile.
                code = await asyncio.to_thread(subprocess.call, command)
        except SuspendNotSupported:
            await self.local_notice("Run `openvaala setup` in a terminal.", error=True)
            return
        text, error = outcome(code)
        await self.local_notice(text, error=error)

    def _setup_command(self, extra: list[str]) -> list[str]:
        """This machine's `openvaala setup`, or over `--remote` the remote machine's: the daemon
        reads the config (and keys) of its own machine (docs/remote.md, "Set-up")."""
        dialer = self.client.dialer if self.client is not None else None
        if dialer is not None:
            return terminal_command(dialer.remote, "setup", *extra)
        return [sys.executable, "-m", "openvaala_server", "setup", *extra]


def outcome(code: int) -> tuple[str, bool]:
    """The notice for setup's exit status (docs/configuration.md): whether anything was written
    decides what the user is told, not only whether it went well."""
    if code == EXIT_OK:
        return (
            "Model configured: /new starts a conversation on it, /model switches this one.",
            False,
        )
    if code == EXIT_TEST_FAILED:
        return (
            "Setup wrote the model to config.toml, but its test turn failed (the reason is in "
            "the terminal above): fix the model's table in config.toml, which the daemon reloads "
            "by itself.",
            True,
        )
    return "Setup did not finish: nothing was changed.", True
