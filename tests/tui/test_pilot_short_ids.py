"""`openvaala --resume ID` takes the short id the lists show, and says so when it names none."""

from __future__ import annotations

from typing import Any

import pytest

from openvaala_tui.app import VaalaApp
from tests.support.events import new_conversation, run_turn
from tests.support.twin_ids import add_twin
from tests.tui.conftest import Clients, demo_config, wait_for


async def test_resume_takes_a_unique_prefix(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    setup = await clients(daemon, "setup")
    cid = await new_conversation(setup, str(daemon.workdir))
    await run_turn(setup, cid, "hello")
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon), resume_id=cid[:8])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.view.conversation_id == cid, what="the conversation")


async def test_resume_with_an_unknown_prefix_says_so(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon), resume_id="00000000")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.return_code == 2, what="the refusal")
    assert not app.view.conversation_id


async def test_resume_with_an_ambiguous_prefix_names_both(
    daemon_factory: Any, clients: Clients, capsys: pytest.CaptureFixture[str]
) -> None:
    daemon = daemon_factory(demo_config())
    setup = await daemon.client("setup")
    cid = await new_conversation(setup, str(daemon.workdir))
    await run_turn(setup, cid, "hello")
    await setup.close()
    twin = add_twin(daemon, cid)
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon), resume_id=cid[:8])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.return_code == 2, what="the refusal")
    assert not app.view.conversation_id
    said = " ".join(capsys.readouterr().err.split())
    assert f"{cid[:8]} is ambiguous" in said and twin[:12] in said
