"""The conversation's permission mode in the terminal: Shift+Tab cycles it, `/approvals` picks
it (docs/security.md, "Permission modes"). The footer shows the mode the daemon announced
(`conversation/updated`), never one this client only asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from openvaala_server.protocol import methods
from openvaala_tui.actions import CommandsMixin
from openvaala_tui.screens import ListPicker

if TYPE_CHECKING:
    from openvaala_server.protocol.payloads import PermissionMode

MODE_HELP: dict[str, str] = {
    "plan": "read-only: the agent reads and plans, every write is refused",
    "ask": "every write and every shell command not in `allow` asks first",
    "auto-edit": "the agent's configuration: edits in the workspace run at once",
}


def next_mode(current: str | None, allowed: list[str]) -> str | None:
    """The mode after `current` in `allowed` (narrowest first), wrapping around."""
    if not allowed:
        return None
    if current not in allowed:
        return allowed[0]
    return allowed[(allowed.index(current) + 1) % len(allowed)]


class PermissionModeCommands(CommandsMixin):
    _mode_asked: str | None = None  # the mode the last Shift+Tab asked for, until answered

    def _permission_modes(self) -> tuple[str | None, list[str]]:
        conversation = self.view.conversation
        mode = conversation.get("permissionMode")
        modes = conversation.get("permissionModes")
        allowed = [str(m) for m in modes] if isinstance(modes, list) else []
        return (str(mode) if mode else None), allowed

    async def set_permission_mode(self, mode: str) -> None:
        await self.call(
            methods.CONVERSATION_SET_PERMISSION_MODE,
            # A mode the daemon listed (`permissionModes`), or the user's: the daemon checks it.
            {"conversationId": self.cid, "mode": cast("PermissionMode", mode)},
        )
        self.notify(f"Permission mode: {mode} ({MODE_HELP.get(mode, '')})")

    async def action_cycle_mode(self) -> None:
        current, allowed = self._permission_modes()
        # Shift+Tab pressed again before the daemon announced the last switch goes on from the
        # mode asked for, not back to the one still shown: each press is one step.
        mode = next_mode(self._mode_asked or current, allowed)
        if mode is None or self.client is None or not self.cid:
            return
        self._mode_asked = mode
        self.run_worker(self._cycle_to(mode), group="command", name="/approvals")

    async def _cycle_to(self, mode: str) -> None:
        try:
            await self.slash("approvals", mode)
        finally:
            if self._mode_asked == mode:  # the last press is answered: the footer is the truth
                self._mode_asked = None

    async def cmd_approvals(self, arg: str) -> None:
        """`/approvals MODE` sets it; alone, a list to pick from, the current one highlighted."""
        current, allowed = self._permission_modes()
        if not arg:
            choices = [(m, f"{m}  {MODE_HELP.get(m, '')}") for m in allowed]
            picked = await self.push_screen_wait(
                ListPicker("Permission mode (Shift+Tab cycles)", choices, current=current)
            )
            arg = picked or ""
        if arg:
            await self.set_permission_mode(arg.strip())
