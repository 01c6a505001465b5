"""The sandbox through the real daemon: the mode a user writes in config.toml is the one enforced.

The demo model's `run: CMD` and the fake provider (at the wire) make the daemon call its tools;
each agent is configured with its own `sandbox`. `approval = "never"` keeps approvals out of the
way: what the sandbox blocks simply fails.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.tools.processes import survivors
from tests.server.tools.sandbox_places import Places
from tests.support.daemon import Daemon
from tests.support.events import completed_items, new_conversation, run_turn

AGENTS = {"workspace": "builder", "read-only": "reader", "off": "unboxed"}


def agents_toml(model: str) -> str:
    return "".join(
        f'[agents.{name}]\ndescription = "{mode}"\nmodel = "{model}"\n'
        f'sandbox = "{mode}"\napproval = "never"\n\n'
        for mode, name in AGENTS.items()
    )


@pytest.fixture
def start_daemon(places: Places) -> Iterator[Callable[[str], Daemon]]:
    """Starts a daemon whose data directory and config file are the places' protected ones."""
    started: list[Daemon] = []

    def start(config: str) -> Daemon:
        places.config.write_text(config)
        daemon = Daemon(home=places.data, config_path=places.config, workdir=places.work)
        started.append(daemon)
        daemon.start()
        return daemon

    yield start
    for daemon in started:
        daemon.stop()


async def shell_output(client: Client, cwd: Path, agent: str, command: str) -> str:
    cid = await new_conversation(client, str(cwd), agent=agent)
    notes = await run_turn(client, cid, f"run: {command}")
    [result] = completed_items(notes, "tool_result")
    return str(result["output"])


async def test_each_agent_gets_the_sandbox_its_config_names(
    places: Places, start_daemon: Callable[[str], Daemon]
) -> None:
    daemon = start_daemon('[models.demo]\nprovider = "demo"\npace_ms = 0\n\n' + agents_toml("demo"))
    client = await daemon.client()
    mark = f"100.{secrets.randbelow(10**6):06d}"
    for mode, agent in AGENTS.items():
        target = places.outside / f"from-{agent}.txt"
        command = (
            f"echo written > {target}; echo here > in-{agent}.txt; "
            f"cat {daemon.data_dir.token_path}; "
            'echo "[$OPENVAALA_HOME][$OPENVAALA_CONFIG]"; '
            f"setsid sleep {mark} >/dev/null 2>&1 & echo finished"
        )
        output = await shell_output(client, places.work, agent, command)
        assert daemon.token not in output, mode
        assert "[][]" in output, mode
        assert "finished" in output, mode
        assert target.exists() == (mode == "off"), mode
        assert (places.work / f"in-{agent}.txt").exists() == (mode != "read-only"), mode
        assert survivors(mark) == [], mode
    await client.close()


async def test_the_network_setting_is_the_one_enforced(
    places: Places, start_daemon: Callable[[str], Daemon]
) -> None:
    networked = (
        '[agents.online]\ndescription = "net"\nmodel = "demo"\nsandbox = "workspace"\n'
        'network = true\napproval = "never"\n'
    )
    daemon = start_daemon(
        '[models.demo]\nprovider = "demo"\npace_ms = 0\n\n' + agents_toml("demo") + networked
    )

    async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello from the host\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(greet, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = await daemon.client()
    command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && cat <&3"
    try:
        offline = await shell_output(client, places.work, AGENTS["workspace"], command)
        online = await shell_output(client, places.work, "online", command)
    finally:
        server.close()
        await server.wait_closed()
    assert "hello from the host" not in offline
    assert online.startswith("hello from the host\n")
    await client.close()


async def test_the_api_key_never_reaches_a_command(
    places: Places,
    start_daemon: Callable[[str], Daemon],
    fake_openai: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert fake_openai.api_key is not None
    monkeypatch.setenv("SOME_API_KEY", fake_openai.api_key)
    daemon = start_daemon(
        fake_openai.config_toml("fake", api_key_env="SOME_API_KEY") + agents_toml("fake")
    )
    client = await daemon.client()
    for agent in AGENTS.values():
        fake_openai.enqueue(
            Reply().tool_call("shell", {"command": 'echo "key=[$SOME_API_KEY]"'}),
            Reply().text("done"),
        )
        cid = await new_conversation(client, str(places.work), agent=agent)
        notes = await run_turn(client, cid, "show me the key")
        [result] = completed_items(notes, "tool_result")
        assert result["output"].startswith("key=[]\n"), agent
        assert fake_openai.api_key not in result["output"]
    # The daemon itself had the key: the model was reached with it.
    assert fake_openai.requests
    await client.close()


async def test_reading_fifos_is_refused_and_the_daemon_keeps_serving(
    places: Places, start_daemon: Callable[[str], Daemon], fake_openai: FakeProvider
) -> None:
    daemon = start_daemon(fake_openai.config_toml("fake") + agents_toml("fake"))
    client = await daemon.client()
    # More parallel reads than the daemon has pool threads: none may get stuck in an open().
    count = 40
    for index in range(count):
        os.mkfifo(places.work / f"pipe{index}")
    reply = Reply()
    for index in range(count):
        reply.tool_call("read_file", {"path": f"pipe{index}"}, call_id=f"call-{index}")
    fake_openai.enqueue(reply, Reply().text("done"))
    cid = await new_conversation(client, str(places.work), agent=AGENTS["workspace"])
    notes = await asyncio.wait_for(run_turn(client, cid, "read the pipes"), 30)
    results = completed_items(notes, "tool_result")
    assert len(results) == count
    assert all(r["isError"] and "is a FIFO" in r["output"] for r in results)
    # Another conversation still gets its turn served.
    fake_openai.enqueue(Reply().text("still here"))
    other = await new_conversation(client, str(places.work), agent=AGENTS["off"])
    notes = await asyncio.wait_for(run_turn(client, other, "hello"), 30)
    assert completed_items(notes, "agent_message")[-1]["text"] == "still here"
    await client.close()


async def test_a_sandboxed_agent_without_bwrap_is_told_what_to_install(
    places: Places, start_daemon: Callable[[str], Daemon], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENVAALA_BWRAP", "")
    daemon = start_daemon('[models.demo]\nprovider = "demo"\npace_ms = 0\n\n' + agents_toml("demo"))
    client = await daemon.client()
    output = await shell_output(client, places.work, AGENTS["workspace"], "touch ran")
    assert "apt-get install bubblewrap" in output
    assert not (places.work / "ran").exists()
    await client.close()
