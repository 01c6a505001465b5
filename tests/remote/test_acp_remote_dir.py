"""`openvaala acp --remote HOST[:DIR]`: `session/new` carries the editor's directory, a path of
this machine. With `HOST:DIR` the session starts in DIR there (and `session/list` of the
editor's directory finds it); without DIR, an editor's path that does not exist there is
refused with an error naming `--remote HOST:DIR`, and no conversation is made; the editor's
files and terminals are not used over `--remote` (docs/design.md, "Gaps after issues 35, 37, 39
and 41")."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities

from openvaala_server.client.remote import ENV_REMOTE
from tests.acp.harness import acp_agent
from tests.acp.test_editor_files import Buffers
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.remote.test_editors_remote import here
from tests.support.daemon import Daemon
from tests.support.sshd import Sshd


def _named_dir(
    remote: Daemon, client_env: dict[str, str], name: str
) -> tuple[Path, dict[str, str]]:
    """A project directory on the remote machine, made there, and a client environment whose
    `--remote remotebox:DIR` names it."""
    project = remote.workdir / name
    project.mkdir(exist_ok=True)
    return project, {**client_env, ENV_REMOTE: f"remotebox:{project}"}


def _editor_dir(tmp_path: Path) -> str:
    """The editor's project on "this machine": a path the remote machine does not have."""
    return str(tmp_path / "laptop" / "project")


async def test_a_session_starts_in_the_directory_named_by_remote_host_dir(
    sshd: Sshd,
    local: Daemon,
    remote: Daemon,
    fake: FakeProvider,
    client_env: dict[str, str],
    tmp_path: Path,
) -> None:
    project, env = _named_dir(remote, client_env, "project")
    editor = _editor_dir(tmp_path)
    fake.enqueue(Reply().text("in the project"))
    async with acp_agent(here(local, env), tmp_path) as (conn, _rec):
        session = await conn.new_session(cwd=editor, mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        # Listed once the index has the conversation (just after its first turn).
        for _ in range(1200):
            listed = await conn.list_sessions(cwd=editor)
            if listed.sessions:
                break
            await asyncio.sleep(0.05)
    assert [(s.session_id, s.cwd) for s in listed.sessions] == [(session.session_id, str(project))]


async def test_an_editor_directory_missing_on_the_remote_is_refused_naming_host_dir(
    sshd: Sshd, local: Daemon, remote: Daemon, client_env: dict[str, str], tmp_path: Path
) -> None:
    editor = _editor_dir(tmp_path)
    async with acp_agent(here(local, client_env), tmp_path) as (conn, _rec):
        before = await conn.list_sessions()
        with pytest.raises(RequestError) as refused:
            await conn.new_session(cwd=editor, mcp_servers=[])
        after = await conn.list_sessions()
    message = str(refused.value)
    assert editor in message and "does not exist on remotebox" in message
    assert "`--remote remotebox:DIR`" in message
    assert refused.value.data is not None and refused.value.data["kind"] == "cwd_missing"
    assert len(after.sessions) == len(before.sessions)  # nothing made anywhere


async def test_a_remote_dir_missing_there_is_refused_naming_it(
    sshd: Sshd, local: Daemon, remote: Daemon, client_env: dict[str, str], tmp_path: Path
) -> None:
    gone = remote.workdir / "no-such-project"
    env = {**client_env, ENV_REMOTE: f"remotebox:{gone}"}
    async with acp_agent(here(local, env), tmp_path) as (conn, _rec):
        with pytest.raises(RequestError) as refused:
            await conn.new_session(cwd=_editor_dir(tmp_path), mcp_servers=[])
    message = str(refused.value)
    assert f"`--remote remotebox:{gone}`" in message
    assert "does not exist on remotebox" in message


async def test_over_remote_the_tools_write_on_the_remote_machine_not_the_editors_buffers(
    sshd: Sshd,
    local: Daemon,
    remote: Daemon,
    fake: FakeProvider,
    client_env: dict[str, str],
    tmp_path: Path,
) -> None:
    # The editor offers its files and terminals, but they are this machine's: the agent's
    # write lands in DIR over there, and the editor is asked for nothing.
    project, env = _named_dir(remote, client_env, "written-there")
    fake.enqueue(
        Reply().tool_call("write_file", {"path": "fresh.txt", "content": "on the remote\n"}),
        Reply().text("done"),
    )
    editor = Buffers({})
    offered = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
    )
    async with acp_agent(here(local, env), tmp_path, rec=editor, capabilities=offered) as (
        conn,
        _rec,
    ):
        session = await conn.new_session(cwd=_editor_dir(tmp_path), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("write")])
    assert response.stop_reason == "end_turn"
    assert (project / "fresh.txt").read_text() == "on the remote\n"
    assert editor.buffers == {}
