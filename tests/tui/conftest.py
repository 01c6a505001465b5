"""Fixtures for the terminal UI tests: a real daemon (tests.support.daemon) and helpers to drive
the app with a pilot until a condition holds."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest
from textual.pilot import Pilot

from openvaala_server.client import Client
from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.approval import ApprovalPrompt
from tests.support.daemon import Daemon
from tests.support.waits import WAIT_S

Clients = Callable[..., Awaitable[Client]]


@pytest.fixture(autouse=True)
def answer_keys_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests answer an approval as soon as it is shown; the delay that guards a user's typed-ahead
    keys has its own tests (test_pilot_approval_typeahead.py), which set it back."""
    monkeypatch.setattr(ApprovalPrompt, "ARM_DELAY", 0.0)


@pytest.fixture(autouse=True)
def no_fake_misuse() -> Iterator[None]:
    """A test fails when its app (or the test) used a `FakeClient` as the daemon would never
    answer (tests/tui/fake_client.py), even when the app caught the exception and went on."""
    from tests.tui.fake_client import FakeClient

    FakeClient.made.clear()
    yield
    misuses = [problem for fake in FakeClient.made for problem in fake.misuses]
    FakeClient.made.clear()
    assert not misuses, f"the fake client was used as the daemon never is: {misuses}"


@pytest.fixture
async def clients() -> AsyncIterator[Clients]:
    """`await clients(daemon, name="tui")`: a connected client, closed after the test."""
    made: list[Client] = []

    async def connect(daemon: Daemon, name: str = "tui") -> Client:
        client = await daemon.client(name)
        made.append(client)
        return client

    yield connect
    for client in made:
        await client.close()


def demo_config(pace_ms: int = 0) -> str:
    return f"""
[models.demo]
provider = "demo"
pace_ms = {pace_ms}
context_window = 100000
max_output_tokens = 8000

[models.other]
provider = "demo"
pace_ms = {pace_ms}

[agents.default]
description = "General assistant"
model = "demo"
"""


async def wait_for(
    pilot: Pilot[int], condition: Callable[[], bool], timeout: float = WAIT_S, what: str = ""
) -> None:
    """Let the app run until `condition()` holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.02)
    await pilot.pause()


async def ready(pilot: Pilot[int]) -> VaalaApp:
    app = pilot.app
    assert isinstance(app, VaalaApp)
    await wait_for(pilot, lambda: bool(app.view.conversation_id), what="the conversation")
    return app


async def type_and_send(pilot: Pilot[int], text: str, key: str = "enter") -> None:
    app = pilot.app
    assert isinstance(app, VaalaApp)
    app.composer.focus()
    app.composer.set_text(text)
    await pilot.press(key)
    await asyncio.sleep(0)


def notices(app: VaalaApp) -> list[str]:
    from openvaala_tui.widgets.items import Notice

    return [str(w.item.get("text")) for w in app.transcript.query(Notice)]


def item_types(app: VaalaApp) -> list[str]:
    return [str(w.item.get("type")) for w in app.transcript.item_widgets]
