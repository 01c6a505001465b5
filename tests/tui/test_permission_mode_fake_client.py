"""Shift+Tab pressed quickly twice moves the permission mode two steps (docs/security.md,
"Permission modes"), on a fake client answering `conversation/setPermissionMode` as the daemon
does: the mode announced in `conversation/updated` (tests/tui/fake_client.py). What each mode
lets an agent do is tested against the real daemon: test_pilot_permission_mode.py."""

from __future__ import annotations

from openvaala_tui.app import VaalaApp
from tests.tui.conftest import ready
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD
from tests.tui.test_pilot_permission_mode import mode_is


def switching_modes() -> FakeClient:
    fake = FakeClient()
    fake.on(
        "conversation/setPermissionMode",
        lambda p: fake.update(str(p["conversationId"]), permissionMode=p["mode"]),
    )
    return fake


async def test_shift_tab_pressed_quickly_twice_moves_two_steps() -> None:
    fake = switching_modes()
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await mode_is(pilot, app, "auto-edit")
        # Two presses as a fast hand or key repeat gives them: the second before the daemon
        # has announced the first (the pilot would wait for the first's answer in between).
        await app.run_action("cycle_mode")
        await app.run_action("cycle_mode")
        await mode_is(pilot, app, "ask")
        await app.run_action("cycle_mode")
        await app.run_action("cycle_mode")
        await mode_is(pilot, app, "plan")
    asked = [params["mode"] for params in fake.params_of("conversation/setPermissionMode")]
    assert asked == ["plan", "ask", "auto-edit", "plan"]  # one step each, none skipped
