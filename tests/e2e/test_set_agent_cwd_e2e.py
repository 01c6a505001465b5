"""A conversation whose agent or working directory is gone (after a move or a config edit) opens,
says so, refuses to run, and can be pointed at another agent or directory
(`conversation/setAgent`, `conversation/setCwd`, recorded in metadata.jsonl)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from openvaala_server.client import Client, RpcError
from openvaala_server.protocol.payloads import ConversationInfo
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.events import (
    collect_until,
    completed_items,
    new_conversation,
    run_turn,
    snapshot_of,
)

TWO_AGENTS = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"

[agents.coder]
description = "Writes code"
model = "demo"
"""

SLOW = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"

[agents.other]
description = "Another"
model = "demo"
"""


def _records(daemon: Daemon, cid: str) -> list[dict[str, Any]]:
    path = daemon.data_dir.metadata_file(cid)
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


async def _info(client: Client, cid: str) -> ConversationInfo:
    snap = await snapshot_of(client, cid)
    info = snap["conversation"]
    return info


async def _saved_with_agent(daemon: Daemon, agent: str) -> str:
    client = await daemon.client(reconnect=False)
    cid = await new_conversation(client, str(daemon.workdir), agent=agent)
    await run_turn(client, cid, "hello")
    await client.close()
    return cid


async def test_a_missing_agent_is_refused_and_another_can_be_chosen(
    daemon_factory: Any,
) -> None:
    daemon: Daemon = daemon_factory(TWO_AGENTS)
    cid = await _saved_with_agent(daemon, "coder")
    daemon.stop()
    daemon.config_path.write_text(TWO_AGENTS.split("[agents.coder]")[0])
    daemon.start()
    client = await daemon.client(reconnect=False)
    try:
        info = await _info(client, cid)
        assert (info["agent"], info["agentAvailable"]) == ("coder", False)
        with pytest.raises(RpcError) as sent:
            await client.request(
                "input/send", {"conversationId": cid, "text": "run: echo hi", "mode": "queue"}
            )
        assert sent.value.kind == "agent_missing"
        assert error_data(sent.value)["agent"] == "coder"
        assert error_data(sent.value)["available"] == ["default"]
        assert "coder" in sent.value.message
        with pytest.raises(RpcError) as unknown:
            await client.request(
                "conversation/setAgent", {"conversationId": cid, "agent": "nobody"}
            )
        assert unknown.value.kind == "agent_missing"

        await client.set_agent(cid, "default")
        notes = await collect_until(client, lambda n: n["method"] == "conversation/updated")
        assert notes[-1]["params"]["conversation"]["agent"] == "default"
        assert notes[-1]["params"]["conversation"]["agentAvailable"] is True
        # The chosen agent's tools are there again: the demo model calls the shell.
        turn = await run_turn(client, cid, "run: echo hi")
        [result] = completed_items(turn, "tool_result")
        assert result["output"].splitlines()[0] == "hi"
    finally:
        await client.close()
    [record] = [r for r in _records(daemon, cid) if r["type"] == "session_agent_set"]
    assert record["agent"] == "default"
    daemon.restart()
    client = await daemon.client(reconnect=False)
    try:
        info = await _info(client, cid)
        assert (info["agent"], info["agentAvailable"]) == ("default", True)
        listed = await client.request("conversation/list", {})
        [row] = [c for c in listed["conversations"] if c["conversationId"] == cid]
        assert row["agent"] == "default"
    finally:
        await client.close()


async def test_set_agent_is_refused_while_a_turn_runs(daemon_factory: Any) -> None:
    daemon: Daemon = daemon_factory(SLOW)
    client = await daemon.client(reconnect=False)
    try:
        cid = await new_conversation(client, str(daemon.workdir))
        await client.request(
            "input/send", {"conversationId": cid, "text": "run: sleep 30", "mode": "queue"}
        )
        await collect_until(client, lambda n: n["method"] == "turn/started")
        for method, params in (
            ("conversation/setAgent", {"agent": "other"}),
            ("conversation/setCwd", {"cwd": str(daemon.workdir.parent)}),
        ):
            with pytest.raises(RpcError) as refused:
                await client.request(method, {"conversationId": cid, **params})
            assert refused.value.kind == "turn_running"
        await client.request("turn/interrupt", {"conversationId": cid})
    finally:
        await client.close()


async def test_a_missing_directory_can_be_pointed_elsewhere(daemon: Daemon, tmp_path: Path) -> None:
    cid = await _saved_with_agent(daemon, "default")
    moved = tmp_path / "moved-work"
    shutil.move(daemon.workdir, moved)
    (moved / "AGENTS.md").write_text("be brief")
    client = await daemon.client(reconnect=False)
    try:
        info = await _info(client, cid)
        assert info["cwdExists"] is False
        with pytest.raises(RpcError) as sent:
            await client.request(
                "input/send", {"conversationId": cid, "text": "hi", "mode": "queue"}
            )
        assert sent.value.kind == "cwd_missing"
        assert "conversation/setCwd" in sent.value.message
        for bad, kind in (
            ("relative/dir", "invalid_params"),
            (str(tmp_path / "nope"), "cwd_missing"),
        ):
            with pytest.raises(RpcError) as refused:
                await client.request("conversation/setCwd", {"conversationId": cid, "cwd": bad})
            assert refused.value.kind == kind
        await client.set_cwd(cid, str(moved))
        notes = await collect_until(client, lambda n: n["method"] == "conversation/updated")
        updated = notes[-1]["params"]["conversation"]
        assert (updated["cwd"], updated["cwdExists"]) == (str(moved), True)
        turn = await run_turn(client, cid, "run: pwd")
        [result] = completed_items(turn, "tool_result")
        assert result["output"].splitlines()[0] == str(moved)
    finally:
        await client.close()
    [record] = [r for r in _records(daemon, cid) if r["type"] == "conversation_cwd_set"]
    assert record["cwd"] == str(moved)
    daemon.restart()
    client = await daemon.client(reconnect=False)
    try:
        info = await _info(client, cid)
        assert (info["cwd"], info["cwdExists"]) == (str(moved), True)
    finally:
        await client.close()
