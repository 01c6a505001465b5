"""In plan mode a shell command the read-only sandbox stops does not tell the model to ask to run
it outside the sandbox (plan mode refuses that request): the tool result says why it cannot,
while outside plan mode the way out is still offered. Real daemon, real bubblewrap."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn
from tests.support.running import running_daemon

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
"""

ASK_OUTSIDE = "outside_sandbox=true"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("plan-note"), CONFIG) as d:
        yield d


async def shell_result(home: Daemon, cwd: Path, mode: str, command: str) -> str:
    client = await home.client()
    try:
        cid = await new_conversation(client, str(cwd))
        await client.request(
            "conversation/setPermissionMode", {"conversationId": cid, "mode": mode}
        )
        notes = await run_turn(client, cid, f"run: {command}")
    finally:
        await client.close()
    results = [
        n["params"]["item"]
        for n in notes
        if n["method"] == "item/completed" and n["params"]["item"]["type"] == "tool_result"
    ]
    assert len(results) == 1 and results[0]["isError"], results
    return str(results[0]["output"])


async def test_a_failed_command_in_plan_mode_does_not_suggest_leaving_the_sandbox(
    home: Daemon, tmp_path: Path
) -> None:
    output = await shell_result(home, tmp_path, "plan", "touch made.txt")
    assert not (tmp_path / "made.txt").exists()
    assert "This command ran in the sandbox (every file except /tmp is read-only" in output
    assert ASK_OUTSIDE not in output
    assert "plan mode (read-only)" in output and "do not ask to run it outside" in output


async def test_outside_plan_mode_the_way_out_is_still_offered(home: Daemon, tmp_path: Path) -> None:
    output = await shell_result(home, tmp_path, "auto-edit", "touch /made-at-the-root.txt")
    assert ASK_OUTSIDE in output
