"""`/setup` in the TUI runs the real `openvaala setup` (here with flags, as `/setup ARGS` passes
them) and words its notice from the exit status: a config written whose test turn failed is not
"nothing was changed". Only the terminal hand-off is replaced: a headless app cannot suspend."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.config import load_config
from openvaala_tui.app import VaalaApp
from tests.fakes import local_servers as shapes
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.tui.conftest import Clients, demo_config, notices, ready, type_and_send, wait_for


@pytest.fixture
def server() -> Iterator[FakeProvider]:
    with FakeProvider(api_key=None) as fake:  # a local server that takes no key
        fake.json_routes[("GET", "/v1/models")] = shapes.openai_models("fake-model")
        fake.json_routes[("GET", "/props")] = shapes.llamacpp_props(16_384)
        yield fake


async def run_setup(
    daemon_factory: Any, clients: Clients, monkeypatch: pytest.MonkeyPatch, config: Path, args: str
) -> list[str]:
    daemon = daemon_factory(demo_config())
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    monkeypatch.setenv("OPENVAALA_CONFIG", str(config))
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)
        before = len(notices(app))
        await type_and_send(pilot, f"/setup {args}")
        await wait_for(pilot, lambda: len(notices(app)) > before, timeout=60, what="the outcome")
        return notices(app)[before:]


@pytest.mark.parametrize(
    ("reply", "said_first"),
    [
        # The test turn fails after config.toml was written (exit status 3).
        (Reply.not_found(), "Setup wrote the model to config.toml, but its test turn failed"),
        (Reply().text("ready"), "Model configured: /new starts a conversation"),
    ],
    ids=["test-turn-failed", "done"],
)
async def test_the_notice_says_what_setup_did(
    reply: Reply,
    said_first: str,
    server: FakeProvider,
    daemon_factory: Any,
    clients: Clients,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    config = tmp_path / "setup" / "config.toml"
    server.enqueue(reply)
    args = f"--provider compatible --base-url {server.base_url()} --model fake-model"
    said = await run_setup(daemon_factory, clients, monkeypatch, config, args)
    assert any(n.startswith(said_first) for n in said), said
    assert not any("nothing was changed" in n for n in said)
    assert load_config(config).agents["default"].model == "fake-model"  # written either way
