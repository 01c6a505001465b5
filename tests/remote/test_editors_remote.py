"""The editor bridge (`openvaala lsp`) and the ACP agent (`openvaala acp`) answer over
`--remote`: each runs here, as the editor's child, and its daemon is the remote one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from acp import text_block

from openvaala_server.client.remote import ENV_REMOTE
from tests.acp.harness import acp_agent
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.lsp.harness import capabilities, request, start_lsp, stop_lsp
from tests.remote.conftest import assert_no_daemon_here
from tests.support.daemon import Daemon
from tests.support.sshd import Sshd


@dataclass
class RemoteClient(Daemon):
    """A client's side of the harnesses: this machine's data directory, `--remote` set."""

    client_env: dict[str, str] | None = None

    @property
    def env(self) -> dict[str, str]:
        assert self.client_env is not None
        return self.client_env


def here(local: Daemon, client_env: dict[str, str]) -> RemoteClient:
    return RemoteClient(local.home, local.config_path, local.workdir, client_env=client_env)


async def test_the_lsp_bridge_prompts_the_remote_daemon(
    client_env: dict[str, str], local: Daemon, remote: Daemon, fake: FakeProvider
) -> None:
    fake.enqueue(Reply().text("From the ", "remote daemon."))
    client, rec, _ = await start_lsp(here(local, client_env), capabilities("neovim"))
    try:
        new = await request(client, "openvaala/conversations/new", {"cwd": str(remote.workdir)})
        cid = new["conversation"]["conversationId"]
        result = await request(client, "openvaala/prompt", {"conversationId": cid, "text": "hi"})
        assert result["status"] == "completed"
        streamed = "".join(
            e["params"]["delta"]
            for e in rec.events
            if e["conversationId"] == cid and e["method"] == "item/delta"
        )
        assert streamed == "From the remote daemon."
        # The status line's text names the machine, as the TUI's does.
        shown = await rec.until(lambda: [u for u in rec.usage if u["conversationId"] == cid])
        assert shown[-1]["text"].endswith(" · on remotebox")
        asked = await request(client, "openvaala/usage", {"conversationId": cid})
        assert asked["machine"] == "remotebox" and asked["text"].endswith(" · on remotebox")
    finally:
        await stop_lsp(client)
    assert_no_daemon_here(local)


async def test_acp_answers_over_remote(
    client_env: dict[str, str], local: Daemon, remote: Daemon, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.enqueue(Reply().text("ACP, ", "remotely."))
    async with acp_agent(here(local, client_env), tmp_path) as (conn, rec):
        session = await conn.new_session(cwd=str(remote.workdir), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert response.stop_reason == "end_turn"
        assert rec.text(session.session_id) == "ACP, remotely."
    assert_no_daemon_here(local)


async def test_a_new_conversation_from_the_editor_starts_in_the_remote_directory(
    sshd: Sshd, local: Daemon, remote: Daemon, client_env: dict[str, str]
) -> None:
    """Not in the editor's workspace folder, a path of this machine: in `HOST:DIR` there."""
    env = {**client_env, ENV_REMOTE: f"remotebox:{remote.workdir}"}
    client, _, _ = await start_lsp(here(local, env), capabilities("neovim"))
    try:
        new = await request(client, "openvaala/conversations/new", {})
    finally:
        await stop_lsp(client)
    assert new["conversation"]["cwd"] == str(remote.workdir)
