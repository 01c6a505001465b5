"""Attack 1 of docs/security.md: renaming a parent of the hidden directories, with the cwd at `~`.

The daemon runs with a temporary HOME and its default places (`~/.local/share/openvaala`,
`~/.config/openvaala/config.toml`), the default agent (`workspace`, `escalate`), real bubblewrap
and a fake provider that scripts the attacker's shell calls. Then the same rename done outside any
sandbox (as if by another program): the daemon loads nothing from, and writes nothing to, the
places that replaced its own.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from openvaala_server.client import Client, RpcError
from tests.fakes.providers import API_KEY_ENV, FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import (
    collect_until,
    completed_items,
    method_is,
    new_conversation,
    run_turn,
)

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

UNCONFINED = '\n[agents.ops]\nmodel = "fake"\nsandbox = "off"\napproval = "never"\n'


@dataclass
class HomeDaemon(Daemon):
    """A daemon that finds its places from HOME alone, as on a user's machine."""

    user_home: Path = Path()

    @property
    def env(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k == API_KEY_ENV or not k.startswith(("OPENVAALA_", "XDG_CONFIG", "XDG_DATA"))
        }
        env["HOME"] = str(self.user_home)
        return env


@pytest.fixture
def user_home() -> Iterator[Path]:
    # Not under /tmp: a sandboxed command has a private /tmp, where the home would be missing.
    home = Path(tempfile.mkdtemp(prefix="openvaala-home-", dir="/var/tmp"))
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def home_daemon(user_home: Path, fake_openai: FakeProvider, tmp_path: Path) -> Iterator[HomeDaemon]:
    config = user_home / ".config" / "openvaala" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        fake_openai.config_toml("fake")
        + '\n[agents.default]\nmodel = "fake"\n\n[server]\nport = 0\n'
    )
    daemon = home_daemon_of(user_home, tmp_path / "server.log")
    daemon.start()
    try:
        yield daemon
    finally:
        daemon.stop()


def home_daemon_of(user_home: Path, log: Path) -> HomeDaemon:
    return HomeDaemon(
        home=user_home / ".local" / "share" / "openvaala",
        config_path=user_home / ".config" / "openvaala" / "config.toml",
        workdir=user_home,
        log_path=log,
        user_home=user_home,
    )


async def no_unconfined_agent(client: Client, cwd: Path) -> None:
    """The `ops` agent of the attacker's config does not exist: nothing can run unconfined."""
    with pytest.raises(RpcError, match="no agent 'ops'"):
        await client.request("conversation/create", {"cwd": str(cwd), "agent": "ops"})


async def shell_turn(client: Client, fake: FakeProvider, cid: str, *commands: str) -> list[str]:
    """One turn whose model calls `shell` with each command; their outputs."""
    fake.enqueue(*(Reply().tool_call("shell", {"command": c}) for c in commands))
    fake.enqueue(Reply().text("done"))
    notes = await run_turn(client, cid, "tidy up my home directory")
    return [str(item["output"]) for item in completed_items(notes, "tool_result")]


async def test_the_rename_chain_from_home_reads_no_token_and_loads_no_config(
    home_daemon: HomeDaemon, user_home: Path, fake_openai: FakeProvider
) -> None:
    config = home_daemon.config_path
    original = config.read_text()
    client = await home_daemon.client()
    try:
        cid = await new_conversation(client, str(user_home))
        new_config = original + UNCONFINED
        outputs = await shell_turn(
            client,
            fake_openai,
            cid,
            "mv ~/.config ~/.config.bak; mv ~/.local/share ~/.local/share.old; "
            "mv ~/.local ~/.local.old; rm -rf ~/.config/openvaala",
            "cat ~/.config.bak/openvaala/config.toml ~/.local/share.old/openvaala/token "
            "~/.local.old/share/openvaala/token ~/.local/share/openvaala/token",
            f"mkdir -p ~/.config/openvaala && cat > ~/.config/openvaala/config.toml <<'EOF'\n"
            f"{new_config}EOF",
        )
        assert len(outputs) == 3
        assert all(home_daemon.token not in output for output in outputs)
        assert "Device or resource busy" in outputs[0]
        # Everything where it was, the config as the user wrote it.
        assert sorted(os.listdir(user_home)) == [".config", ".local"]
        assert config.read_text() == original
        assert (home_daemon.home / "token").read_text().strip() == home_daemon.token

        await no_unconfined_agent(client, user_home)
    finally:
        await client.close()


async def test_a_replaced_config_directory_is_not_reloaded(
    home_daemon: HomeDaemon, user_home: Path
) -> None:
    config = home_daemon.config_path
    client = await home_daemon.client()
    try:
        moved = user_home / ".config.bak"
        (user_home / ".config").rename(moved)
        config.parent.mkdir(parents=True)
        config.write_text((moved / "openvaala" / "config.toml").read_text() + UNCONFINED)
        notes = await collect_until(client, method_is("config/error"))
        error = notes[-1]["params"]
        assert "moved or replaced" in error["message"]
        assert str(config.parent) in error["message"]
        await no_unconfined_agent(client, user_home)
    finally:
        await client.close()


async def test_a_replaced_data_directory_gets_no_writes(
    home_daemon: HomeDaemon, user_home: Path
) -> None:
    client = await home_daemon.client()
    try:
        cid = await new_conversation(client, str(user_home))
        data = home_daemon.home
        data.rename(data.with_name("openvaala.old"))
        data.mkdir()
        notes = await collect_until(client, method_is("config/error"))
        assert "data directory" in notes[-1]["params"]["message"]
        with pytest.raises(RpcError, match="moved or replaced"):
            await client.request(
                "input/send", {"conversationId": cid, "text": "hello", "mode": "queue"}
            )
        assert list(data.iterdir()) == []
    finally:
        await client.close()


async def test_a_config_the_user_has_not_made_yet_cannot_be_made_by_a_tool(
    user_home: Path, tmp_path: Path
) -> None:
    daemon = home_daemon_of(user_home, tmp_path / "server.log")
    daemon.start()  # no config: the built-in demo agent, whose `run:` calls the shell tool
    try:
        client = await daemon.client()
        cid = await new_conversation(client, str(user_home))
        command = (
            'mkdir -p ~/.config/openvaala && printf \'[models.demo]\\nprovider = "demo"\\n'
            '[agents.ops]\\nmodel = "demo"\\nsandbox = "off"\\n\' '
            "> ~/.config/openvaala/config.toml"
        )
        notes = await run_turn(client, cid, f"run: {command}")
        [result] = completed_items(notes, "tool_result")
        assert "Read-only file system" in result["output"]
        assert os.listdir(daemon.config_path.parent) == []
        await no_unconfined_agent(client, user_home)
        await client.close()
    finally:
        daemon.stop()
