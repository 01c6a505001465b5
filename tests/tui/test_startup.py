"""What `openvaala` does on its way to the first screen (docs/design.md, "Start-up time"): it
loads nothing the first screen does not need, and collects no garbage until that screen is up.
"""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from openvaala_server import client as client_library
from openvaala_server import commands
from openvaala_tui.app import VaalaApp
from tests.tui.conftest import ready, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD

# Loaded by the commands that use them, never by the terminal UI before its first screen.
NOT_AT_START = (
    "anyio",  # the client's task group is asyncio's; the LSP bridge and ACP agent load anyio
    "openvaala_server.config",  # the welcome names the file the daemon read
    "openvaala_server.store",  # the lock is read through discovery.py
    "openvaala_server.domain.records",  # the fold and the widgets take the records' shapes as types
    "openvaala_server.domain.diffs",
    "openvaala_server.protocol.payloads",
)


def test_the_terminal_ui_imports_nothing_its_first_screen_does_not_need() -> None:
    code = (
        "import sys\n"
        "import openvaala_server.cli, openvaala_server.commands, openvaala_tui.app\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
        "from openvaala_server.client.view import Item\n"  # still there, loaded when asked for
        "print('Item from', Item.__module__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[-1] == "Item from openvaala_server.domain.records"
    loaded = out[:-1]
    assert "openvaala_tui.app" in loaded
    early = [m for m in loaded if m.startswith(NOT_AT_START)]
    assert early == [], f"imported on the way to the first screen: {early}"


def test_openvaala_starts_the_terminal_ui_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[bool] = []

    def tui_main(cwd: str | None, **_: Any) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(client_library, "start_server_early", lambda: None)
    monkeypatch.setattr("openvaala_tui.app.main", tui_main)
    assert gc.isenabled()
    try:
        assert commands.run_tui(str(tmp_path)) == 0
    finally:
        gc.enable()
    assert seen == [False]


async def test_the_collector_runs_again_once_the_first_screen_is_up() -> None:
    # The first screen of a new conversation, on a fake client (tests/tui/fake_client.py).
    app = VaalaApp(cwd=CWD, client=FakeClient())
    gc.disable()  # as `openvaala` starts it
    try:
        async with app.run_test() as pilot:
            await ready(pilot)
            await wait_for(pilot, gc.isenabled, what="the collector to run again")
            assert app.transcript.query_one("#welcome").display
    finally:
        gc.enable()
