"""The Codex IDE extension's way in (docs/codex.md "Connecting"): the two-line wrapper the docs
give, named by `CODEX_CLI_PATH`, spawned as the extension and the desktop app spawn their
binary: `$CODEX_CLI_PATH app-server --analytics-default-enabled` (the desktop app puts
`-c features.code_mode_host=true` first), with the editor's environment plus `RUST_LOG=warn`
(as read in public code that drives the same binary), from the workspace folder, speaking JSONL
on stdio. It starts without a sign-in, a turn is answered by OpenVaala, the thread is a
conversation `openvaala list` shows, and closing stdin ends the process cleanly.

The extension itself is not run: no registry this machine reaches carries it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.codex.flows import demo_config, items_of, module_daemon, run_turn
from tests.codex.harness import TIMEOUT, CodexClient, StdioTransport
from tests.support.daemon import Daemon

# docs/codex.md's wrapper, word for word.
WRAPPER = "#!/bin/sh\nexec openvaala app-server\n"
EXTENSION = ["app-server", "--analytics-default-enabled"]
DESKTOP = ["-c", "features.code_mode_host=true", "app-server", "--analytics-default-enabled"]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with module_daemon(tmp_path_factory, "ide", demo_config()) as daemon:
        yield daemon


@pytest.mark.parametrize("arguments", [EXTENSION, DESKTOP], ids=["vscode", "desktop"])
async def test_the_extension_s_spawn_of_the_wrapper_drives_a_conversation(
    home: Daemon, tmp_path: Path, arguments: list[str]
) -> None:
    wrapper = tmp_path / "codex-openvaala"
    wrapper.write_text(WRAPPER)
    wrapper.chmod(0o755)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {
        **home.env,
        # `openvaala` on the editor's PATH, as docs/codex.md asks (this venv's console script).
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "CODEX_CLI_PATH": str(wrapper),
        "RUST_LOG": "warn",
        "CODEX_INTERNAL_ORIGINATOR_OVERRIDE": "codex_vscode",
        "ELECTRON_RUN_AS_NODE": "1",  # set in every VS Code extension host
    }
    process = await asyncio.create_subprocess_exec(
        env["CODEX_CLI_PATH"],
        *arguments,
        env=env,
        cwd=workspace,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024,
    )
    codex = CodexClient(StdioTransport(process))
    try:
        client_info = {"name": "codex_vscode", "title": "Codex", "version": "26.1"}
        await codex.request(
            "initialize",
            {"clientInfo": client_info, "capabilities": {"experimentalApi": True}},
        )
        await codex.notify("initialized")
        account = await codex.request("account/read", {"refreshToken": False})
        assert account["requiresOpenaiAuth"] is False  # no sign-in screen
        started = await codex.request("thread/start", {"cwd": str(workspace)})
        thread = started["thread"]["id"]
        _, mark = await run_turn(codex, thread, "hello from the extension")
        [answer] = items_of(codex, mark, "item/completed", "agentMessage")
        assert "hello from the extension" in answer["text"]
        listed = await codex.request(
            "thread/list", {"sourceKinds": ["vscode"], "cwd": str(workspace)}
        )
        assert [t["id"] for t in listed["data"]] == [thread]
    finally:
        await codex.close()
    assert process.returncode == 0  # stdin closed: it answered and left
    shown = await asyncio.wait_for(asyncio.to_thread(home.cli, "list", "--json"), TIMEOUT)
    assert shown.returncode == 0, shown.stderr
    titles = [c["title"] for c in json.loads(shown.stdout) if c["cwd"] == str(workspace)]
    assert titles == ["hello from the extension"]
