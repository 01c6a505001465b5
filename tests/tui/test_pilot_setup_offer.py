"""The TUI offers `openvaala setup` on its first screen while only the demo model is configured,
and only then; it never stops the user: the demo conversation is open and answers."""

from __future__ import annotations

from typing import Any

from openvaala_tui.app import VaalaApp
from openvaala_tui.setup_actions import OFFER
from openvaala_tui.widgets.welcome import Welcome
from tests.tui.conftest import Clients, demo_config, notices, ready, type_and_send, wait_for


def welcome_of(app: VaalaApp) -> str:
    return " ".join(str(app.transcript.query_one(Welcome).content).split())


async def test_a_first_run_on_the_demo_model_offers_setup(
    daemon_factory: Any, clients: Clients
) -> None:
    daemon = daemon_factory(demo_config())
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: OFFER in welcome_of(app), what="the offer")
        await type_and_send(pilot, "hello")  # not forced: the demo model answers meanwhile
        await wait_for(
            pilot,
            lambda: any(w.item.get("type") == "agent_message" for w in app.transcript.item_widgets),
            what="the demo's answer",
        )


async def test_a_configured_model_is_not_offered_setup(
    daemon_factory: Any, clients: Clients
) -> None:
    real = '[models.real]\nprovider = "openai"\nmodel = "gpt-4o"\napi_key_env = "NO_SUCH_KEY"\n'
    daemon = daemon_factory(real + demo_config())
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/help")  # something after the boot's last step
        await wait_for(pilot, lambda: any("Keys:" in n for n in notices(app)), what="help")
        assert welcome_of(app) and OFFER not in welcome_of(app)
