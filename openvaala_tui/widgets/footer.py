"""The key footer, recomposed only when what it shows changes.

Textual's `Footer` rebuilds all its keys whenever the screen's bindings are recomputed — on every
focus change, several times while the app starts — and each rebuild restyles every key. That was
the largest single part of drawing the first screen (docs/design.md, "Start-up time"). The keys
shown depend only on the active bindings' key, description, action, enabled state and tooltip:
when those are what is already shown, nothing is rebuilt.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


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
