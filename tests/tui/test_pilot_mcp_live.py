"""The TUI follows `mcp/statusChanged` (docs/protocol.md), against a real daemon and a real
SDK-built server that starts slowly: once the server is ready the composer completes its prompts,
though no turn ended since and nothing asked `mcp/list`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openvaala_tui.app import VaalaApp
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import STARTUP_S, daemon_config, gated_config
from tests.support.events import collect_until, new_conversation, run_turn
from tests.tui.conftest import Clients, ready, type_and_send, wait_for


@pytest.mark.timeout(180)
async def test_the_composer_offers_a_servers_prompts_once_it_is_ready(
    daemon_factory: Any, clients: Clients, fake: FakeProvider, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"  # the server answers once it exists
    daemon = daemon_factory(gated_config(fake, gate))
    fake.enqueue(Reply().text("hello"))
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    async with app.run_test(size=(110, 44)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "hi")  # the turn starts the server in the background
        await wait_for(
            pilot,
            lambda: (
                "t" in app.mcp_servers.servers
                and app.mcp_servers.servers["t"]["status"] == "starting"
            ),
            60,
            "the server starting",
        )
        await wait_for(pilot, lambda: not app.view.root or not app.view.root.running, 60)
        assert not app.composer.mcp_offers.prompts  # not ready: nothing to offer yet
        gate.write_text("go")
        composer = app.composer
        await wait_for(pilot, lambda: bool(composer.mcp_offers.prompts), STARTUP_S, "the offers")
        composer.set_text("/mcp__t__re")
        composer.update_completion()
        assert composer.popup is not None and composer.popup.completion is not None
        assert composer.popup.completion.candidates[0][0] == "/mcp__t__review"


@pytest.mark.timeout(180)
async def test_a_tui_opened_after_a_server_is_ready_offers_its_prompts(
    daemon_factory: Any, clients: Clients, fake: FakeProvider
) -> None:
    daemon = daemon_factory(daemon_config(fake, extra=f"startup_timeout_s = {STARTUP_S:g}\n"))
    fake.enqueue(Reply().tool_call("mcp__t__echo", {"text": "start"}), Reply().text("started"))
    other = await daemon.client()  # another client's turn starts the server
    try:
        cid = await new_conversation(other, str(daemon.workdir))
        notes = await run_turn(other, cid, "start it")
        ready_note = [
            n
            for n in notes
            if n["method"] == "mcp/statusChanged" and n["params"]["status"] == "ready"
        ]
        if not ready_note:
            await collect_until(
                other,
                lambda n: n["method"] == "mcp/statusChanged" and n["params"]["status"] == "ready",
                timeout=STARTUP_S,
            )
    finally:
        await other.close()
    # No turn of this TUI ends and the server changes no more: its prompts are offered anyway.
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    async with app.run_test(size=(110, 44)) as pilot:
        await ready(pilot)
        composer = app.composer
        await wait_for(pilot, lambda: bool(composer.mcp_offers.prompts), STARTUP_S, "the offers")
        composer.set_text("/mcp__t__re")
        composer.update_completion()
        assert composer.popup is not None and composer.popup.completion is not None
        assert composer.popup.completion.candidates[0][0] == "/mcp__t__review"
