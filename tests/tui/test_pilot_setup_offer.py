"""The TUI offers `openvaala setup` on its first screen while only the demo model is configured,
and only then; it never stops the user: the demo conversation is open and answers.

On a fake client (tests/tui/fake_client.py) whose `models/list` is the daemon's for each config;
the daemon's listing of a config's models: tests/e2e/."""

from __future__ import annotations

from openvaala_tui.app import VaalaApp
from openvaala_tui.setup_actions import OFFER
from openvaala_tui.widgets.welcome import Welcome
from tests.tui.conftest import notices, ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD, model


def welcome_of(app: VaalaApp) -> str:
    return " ".join(str(app.transcript.query_one(Welcome).content).split())


async def test_a_first_run_on_the_demo_model_offers_setup() -> None:
    fake = FakeClient(models=("demo", "other"))  # both on the demo provider
    fake.answer_sends("I am the offline demo model.")
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: OFFER in welcome_of(app), what="the offer")
        await type_and_send(pilot, "hello")  # not forced: the demo model answers meanwhile
        await wait_for(
            pilot,
            lambda: any(w.item.get("type") == "agent_message" for w in app.transcript.item_widgets),
            what="the demo's answer",
        )


async def test_a_configured_model_is_not_offered_setup() -> None:
    fake = FakeClient()
    fake.models.insert(0, model("real", provider="openai"))
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/help")  # something after the boot's last step
        await wait_for(pilot, lambda: any("Keys:" in n for n in notices(app)), what="help")
        assert "models/list" in fake.methods()  # the offer was decided, not skipped
        assert welcome_of(app) and OFFER not in welcome_of(app)
