"""`conversation/setPermissionMode` through the real daemon (docs/security.md, "Permission
modes"): chosen before the first message it is written with the conversation and survives a
restart; every subscriber hears of a switch; a mode wider than the agent allows is refused with
an error naming it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from openvaala_server.client import RpcError
from tests.support.daemon import Daemon
from tests.support.events import collect_until, method_is, new_conversation, run_turn, snapshot_of
from tests.support.running import running_daemon

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"

[agents.careful]
description = "asks first"
model = "demo"
approval = "always"
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("modes"), CONFIG) as d:
        yield d


def set_mode(cid: str, mode: str) -> dict[str, str]:
    return {"conversationId": cid, "mode": mode}


async def test_a_mode_chosen_before_the_first_message_survives_a_restart(
    home: Daemon, tmp_path: Path
) -> None:
    client = await home.client()
    try:
        cid = await new_conversation(client, str(tmp_path))
        assert (await snapshot_of(client, cid))["conversation"]["permissionMode"] == "auto-edit"
        watcher = await home.client("watcher")
        await watcher.subscribe(cid)
        await client.request("conversation/setPermissionMode", set_mode(cid, "plan"))
        note = await collect_until(watcher, method_is("conversation/updated"))
        assert note[-1]["params"]["conversation"]["permissionMode"] == "plan"
        await watcher.close()
        target = tmp_path / "x.txt"
        write = json.dumps({"path": str(target), "content": "x"})
        notes = await run_turn(client, cid, f"call: write_file {write}")
        assert not target.exists()
        results = [n for n in notes if n["method"] == "item/completed"]
        assert any("plan mode" in str(n["params"]) for n in results)
    finally:
        await client.close()
    home.restart()
    client = await home.client()
    try:
        info = (await snapshot_of(client, cid))["conversation"]
        assert info["permissionMode"] == "plan"
        assert info["permissionModes"] == ["plan", "ask", "auto-edit"]
    finally:
        await client.close()


async def test_a_mode_wider_than_the_agent_is_refused(home: Daemon, tmp_path: Path) -> None:
    client = await home.client()
    try:
        cid = await new_conversation(client, str(tmp_path), agent="careful")
        info = (await snapshot_of(client, cid))["conversation"]
        assert info["permissionMode"] == "ask"  # its approval asks every write
        assert info["permissionModes"] == ["plan", "ask"]
        with pytest.raises(RpcError) as wider:
            await client.request("conversation/setPermissionMode", set_mode(cid, "auto-edit"))
        assert wider.value.kind == "invalid_params"
        assert '"auto-edit" would be wider' in str(wider.value)
        assert "'careful'" in str(wider.value)
        with pytest.raises(RpcError) as unknown:
            await client.request("conversation/setPermissionMode", set_mode(cid, "yolo"))
        assert "plan, ask, auto-edit" in str(unknown.value)
        await client.request("conversation/setPermissionMode", set_mode(cid, "plan"))
        assert (await snapshot_of(client, cid))["conversation"]["permissionMode"] == "plan"
    finally:
        await client.close()


async def test_a_fork_keeps_the_mode(home: Daemon, tmp_path: Path) -> None:
    client = await home.client()
    try:
        cid = await new_conversation(client, str(tmp_path))
        await client.request("conversation/setPermissionMode", set_mode(cid, "plan"))
        await run_turn(client, cid, "hello")
        forked = await client.request("conversation/fork", {"conversationId": cid})
        fid = forked["conversation"]["conversationId"]
        assert forked["conversation"]["permissionMode"] == "plan"
        assert (await snapshot_of(client, fid))["conversation"]["permissionMode"] == "plan"
        target = tmp_path / "y.txt"
        write = json.dumps({"path": str(target), "content": "y"})
        await run_turn(client, fid, f"call: write_file {write}")
        assert not target.exists()  # still read-only in the copy
    finally:
        await client.close()
