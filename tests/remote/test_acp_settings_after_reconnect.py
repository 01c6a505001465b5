"""`openvaala acp` announces the permission mode and the model in force once it is connected
again: switched by another client while ssh was down and the agent was dialing again, they
redraw the editor's selectors at once, not at the next switch or `session/load`
(docs/editors.md, ACP).

The agent's ssh goes through a wrapper that waits on a FIFO before it dials again, so the switch
is made while the agent is away for certain (no race with its reconnection). The remote daemon
restarts meanwhile, so the agent finds a snapshot, not a replay of the switches (which it
already followed)."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
from pathlib import Path

from acp import text_block
from acp.schema import ConfigOptionUpdate

from openvaala_server.client import Client
from openvaala_server.discovery import read_lock
from tests.acp.harness import acp_agent
from tests.acp.test_permission_modes import last_permission
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.remote.test_editors_remote import here
from tests.support.daemon import Daemon
from tests.support.sshd import Sshd


def _model(update: ConfigOptionUpdate) -> str:
    return next(str(o.current_value) for o in update.config_options if o.id == "model")


async def test_acp_announces_a_mode_and_model_switched_while_it_was_away(
    sshd: Sshd,
    local: Daemon,
    remote: Daemon,
    fake: FakeProvider,
    client_env: dict[str, str],
    tmp_path: Path,
) -> None:
    gate = tmp_path / "gate"
    wrapper = tmp_path / "ssh-gated"
    # While the FIFO exists, a dial waits until the test opens it for writing.
    wrapper.write_text(f'#!/bin/sh\n[ -p "{gate}" ] && cat "{gate}" >/dev/null\nexec ssh "$@"\n')
    wrapper.chmod(0o755)
    env = {**client_env, "OPENVAALA_SSH_COMMAND": f"{wrapper} -F {sshd.ssh_config}"}
    other = None
    async with acp_agent(here(local, env), tmp_path) as (conn, rec):
        try:
            session = await conn.new_session(cwd=str(remote.workdir), mcp_servers=[])
            sid = session.session_id
            # A turn, so the conversation is saved and outlives the daemon's restart.
            fake.enqueue(Reply().text("saved"))
            await conn.prompt(session_id=sid, prompt=[text_block("hi")])
            os.mkfifo(gate)
            assert sshd.kill_clients() >= 1
            # The daemon over there restarts meanwhile: the agent's resubscription gets a
            # snapshot (the new daemon holds none of the events it missed), not a replay.
            restart = [*shlex.split(sshd.ssh_command), "remotebox", "openvaala", "serve", "restart"]
            done = await asyncio.to_thread(
                subprocess.run, restart, capture_output=True, text=True, timeout=60, check=False
            )
            assert done.returncode == 0, done.stderr
            # Another client on the remote machine (its daemon, as the bridge started it).
            there = read_lock(remote.data_dir.lock_path)
            assert there is not None
            token = remote.data_dir.token_path.read_text().strip()
            other = await Client.connect(there.address, token, client_name="another client")
            await other.request(
                "conversation/setPermissionMode", {"conversationId": sid, "mode": "plan"}
            )
            await other.request("conversation/setModel", {"conversationId": sid, "model": "seeing"})
            seen = len(rec.updates)
            # Let the agent dial again (the open waits for the wrapper to read).
            await asyncio.to_thread(lambda: open(gate, "w").close())
            gate.unlink()
            await rec.until(
                lambda: (
                    (last_permission(rec, sid) or ("",))[0] == "plan"
                    and _model(rec.of(sid, ConfigOptionUpdate)[-1]) == "seeing"
                ),
                timeout=30,
            )
            assert len(rec.updates) > seen
        finally:
            if gate.exists():
                gate.unlink()
            if other is not None:
                await other.close()
