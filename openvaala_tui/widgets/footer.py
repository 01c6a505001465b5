"""The key footer, recomposed only when what it shows changes.

Textual's `Footer` rebuilds all its keys whenever the screen's bindings are recomputed — on every
focus change, several times while the app starts — and each rebuild restyles every key. That was
the largest single part of drawing the first screen (docs/design.md, "Start-up time"). The keys
shown depend only on the active bindings' key, description, action, enabled state and tooltip:
when those are what is already shown, nothing is rebuilt.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


def _shown(screen: Screen[object]) -> tuple[tuple[str, str, str, bool, str | None], ...]:
    palette = screen.app.COMMAND_PALETTE_BINDING
    return tuple(
        (binding.key, binding.description, binding.action, enabled, tooltip)
        for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
        if binding.show or key == palette
    )


class QuietFooter(Footer):
    _last_shown: tuple[tuple[str, str, str, bool, str | None], ...] | None = None
    # A rebuild is asked for and has not run yet: it composes the keys of when it runs, so a
    # second change before then needs no second rebuild (at start, focus moves from the
    # transcript to the composer before the first one runs).
    _rebuild_pending = False
    # The conversation's permission mode, shown after the keys (None: not known, not shown).
    permission_mode: str | None = None

    def show_permission_mode(self, mode: str | None) -> None:
        if mode != self.permission_mode:
            self.permission_mode = mode
            if self._bindings_ready:
                self._rebuild_pending = True
                self.call_later(self.recompose)

    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        if self.permission_mode is not None:
            mode = FooterKey(
                "shift+tab",
                "⇧⇥",
                f"mode: {self.permission_mode}",
                "app.cycle_mode",
                tooltip="Shift+Tab cycles the permission mode (/approvals picks it)",
                classes="-permission-mode",
            ).data_bind(compact=Footer.compact)
            at = next(
                (i for i, key in enumerate(keys) if key.has_class("-command-palette")), len(keys)
            )
            keys.insert(at, mode)
        yield from keys

    def bindings_changed(self, screen: Screen[object]) -> None:
        # Only while its screen is the one shown: under a modal, Textual's own rules apply
        # (skipping there left the keys of a moment before, depending on timing).
        if (
            self.is_attached
            and screen is self.screen
            and screen is screen.app.screen
            and screen.app.app_focus
        ):
            shown = _shown(screen)
            if shown == self._last_shown and self._bindings_ready:
                return
            self._last_shown = shown
            if self._rebuild_pending and self._bindings_ready:
                return
            self._rebuild_pending = True
        super().bindings_changed(screen)

    async def recompose(self) -> None:
        self._rebuild_pending = False
        await super().recompose()
