"""A config.toml edit while the TUI is open: a typo is shown (and stays shown to a TUI opened
after it), a fixed file says what was reloaded. On a fake client (tests/tui/fake_client.py)
sending what the daemon sends, in its words; the daemon's side (the file rewritten on disk, the
messages, `initialize` naming the error): tests/e2e/test_config_reload_e2e.py."""

from __future__ import annotations

from openvaala_server.protocol.payloads import ConfigErrorNote, ConfigReloadedNote, ConfigState
from openvaala_tui.app import VaalaApp
from tests.tui.conftest import notices, ready, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CONFIG_PATH, CWD

TYPO: ConfigErrorNote = {
    "path": CONFIG_PATH,
    "state": "error",
    "message": f"{CONFIG_PATH}: agents.default.modle: unknown key; did you mean `model`?"
    " — the daemon keeps its last good configuration",
    "key": "agents.default.modle",
}
FIXED: ConfigReloadedNote = {
    "path": CONFIG_PATH,
    "state": "ok",
    "message": f"reloaded {CONFIG_PATH}: models changed",
    "changed": ["models"],
    "restartNeeded": [],
    "mcpRestarted": [],
}


def has(app: VaalaApp, text: str) -> bool:
    return any(text in n for n in notices(app))


async def test_a_config_typo_is_shown_and_a_fix_is_reported() -> None:
    fake = FakeClient()
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        fake.emit("config/error", TYPO)
        await wait_for(pilot, lambda: has(app, "Config error"), what="the config error")
        assert has(app, "agents.default.modle: unknown key; did you mean `model`?")
        assert has(app, "keeps its last good configuration")

        # A TUI opened while the file is broken says so from its first screen (`initialize`).
        broken: ConfigState = {**TYPO}
        second = VaalaApp(cwd=CWD, client=FakeClient(config=broken))
        async with second.run_test(size=(80, 24)) as second_pilot:
            await ready(second_pilot)
            await wait_for(second_pilot, lambda: has(second, "Config error"), what="the error")

        fake.emit("config/reloaded", FIXED)
        await wait_for(pilot, lambda: has(app, "models changed"), what="the reload")
