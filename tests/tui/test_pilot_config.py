"""A config.toml edit while the TUI is open: a typo is shown (and stays shown to a TUI opened
after it), a fixed file says what was reloaded. A real daemon, the file rewritten on disk."""

from __future__ import annotations

from typing import Any

from openvaala_tui.app import VaalaApp
from tests.tui.conftest import Clients, notices, ready, wait_for


def has(app: VaalaApp, text: str) -> bool:
    return any(text in n for n in notices(app))


async def test_a_config_typo_is_shown_and_a_fix_is_reported(
    daemon_factory: Any, clients: Clients
) -> None:
    daemon = daemon_factory()
    good = daemon.config_path.read_text()
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        broken = good.replace("[agents.default]", "[agents.default]\nmodle = 1")
        daemon.config_path.write_text(broken)
        await wait_for(pilot, lambda: has(app, "Config error"), what="the config error")
        assert has(app, "agents.default.modle: unknown key; did you mean `model`?")
        assert has(app, "keeps its last good configuration")

        # A TUI opened while the file is broken says so from its first screen.
        second = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon, "second"))
        async with second.run_test(size=(80, 24)) as second_pilot:
            await ready(second_pilot)
            await wait_for(second_pilot, lambda: has(second, "Config error"), what="the error")

        daemon.config_path.write_text(good + '\n[models.second]\nprovider = "demo"\n')
        await wait_for(pilot, lambda: has(app, "models changed"), what="the reload")
