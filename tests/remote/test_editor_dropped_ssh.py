"""The editor bridge and the ACP agent over `--remote` when ssh drops mid-turn: each dials again
through ssh, the editor gets the turn's events with no gap and no duplicate, and the prompt its
answer, not `daemon_lost`: the daemon over there never stopped (docs/remote.md, "When ssh
drops")."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import text_block

from tests.acp.harness import acp_agent
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.lsp.harness import capabilities, request, start_lsp, stop_lsp
from tests.remote.test_editors_remote import here
from tests.support.daemon import Daemon
from tests.support.sshd import Sshd


async def test_the_editor_bridge_resumes_a_turn_after_ssh_is_killed(
    client_env: dict[str, str], local: Daemon, remote: Daemon, fake: FakeProvider, sshd: Sshd
) -> None:
    gate = Gate()
    fake.enqueue(Reply().text("before the drop, ").wait(gate).text("after ", "it."))
    client, rec, _ = await start_lsp(here(local, client_env), capabilities("neovim"))
    try:
        new = await request(client, "openvaala/conversations/new", {"cwd": str(remote.workdir)})
        cid = new["conversation"]["conversationId"]
        prompt = asyncio.ensure_future(
            request(client, "openvaala/prompt", {"conversationId": cid, "text": "go"})
        )

        def deltas() -> str:
            return "".join(
                e["params"]["delta"]
                for e in rec.events
                if e["conversationId"] == cid and e["method"] == "item/delta"
            )

        await rec.until(lambda: "before the drop" in deltas(), timeout=30)
        assert sshd.kill_clients() >= 1
        await rec.until(lambda: "reconnecting" in rec.connection, timeout=30)
        gate.open()  # the turn goes on over there while the bridge is away
        result = await asyncio.wait_for(prompt, 60)
        await rec.until(lambda: "connected" in rec.connection, timeout=30)
    finally:
        gate.open()
        await stop_lsp(client)
    assert result["status"] == "completed"
    assert deltas() == "before the drop, after it."
    mine = [e for e in rec.events if e["conversationId"] == cid]
    assert "conversation/snapshot" not in [e["method"] for e in mine]  # replayed, not redrawn
    seqs = [e["seq"] for e in mine if e["seq"] is not None]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # no gap, no duplicate


async def test_acp_answers_the_prompt_after_ssh_is_killed(
    client_env: dict[str, str],
    local: Daemon,
    remote: Daemon,
    fake: FakeProvider,
    sshd: Sshd,
    tmp_path: Path,
) -> None:
    gate = Gate()
    fake.enqueue(Reply().text("before the drop, ").wait(gate).text("after ", "it."))
    async with acp_agent(here(local, client_env), tmp_path) as (conn, rec):
        session = await conn.new_session(cwd=str(remote.workdir), mcp_servers=[])
        sid = session.session_id
        prompt = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        try:
            await rec.until(lambda: "before the drop" in rec.text(sid), timeout=30)
            assert sshd.kill_clients() >= 1
        finally:
            gate.open()  # the turn goes on over there while the agent dials again
        response = await asyncio.wait_for(prompt, 60)
        assert response.stop_reason == "end_turn"  # not an error: the daemon never stopped
        assert rec.text(sid) == "before the drop, after it."
