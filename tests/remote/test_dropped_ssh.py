"""A dropped SSH connection is a dropped connection: the client dials again through ssh,
resubscribes from the last seq it saw, and the turn's events arrive with no gap and no
duplicate (docs/remote.md, "When ssh drops")."""

from __future__ import annotations

import pytest

from openvaala_server.client import CONNECTION, SNAPSHOT, Client
from openvaala_server.client.backoff import Backoff
from openvaala_server.client.remote import ENV_SSH, parse
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.support.daemon import Daemon, stop_any_server
from tests.support.events import collect_until, new_conversation
from tests.support.sshd import Sshd


async def test_ssh_killed_mid_turn_resumes_with_no_gap(
    sshd: Sshd, remote: Daemon, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_SSH, sshd.ssh_command)
    gate = Gate()
    fake.enqueue(Reply().text("before the drop, ").wait(gate).text("after ", "it."))
    client = await Client.connect(
        remote=parse("remotebox"), backoff=Backoff(first=0.05, factor=2.0, cap=0.2)
    )
    try:
        assert client.dialer is not None and client.dialer.banner is not None
        first_pid = client.dialer.banner.pid
        cid = await new_conversation(client, str(remote.workdir))
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
        notes = await collect_until(
            client, lambda n: "before the drop" in str(n["params"].get("delta", "")), timeout=30
        )
        assert sshd.kill_clients() >= 1
        notes += await collect_until(
            client, lambda n: n["method"] == CONNECTION and n["params"]["state"] == "reconnecting"
        )
        gate.open()  # the turn goes on over there while the client is away
        notes += await collect_until(client, lambda n: n["method"] == "turn/ended", timeout=30)
        if not any(n["params"].get("state") == "connected" for n in notes):
            # The replay comes before the connection is announced (connection.py).
            notes += await collect_until(client, lambda n: n["method"] == CONNECTION)
    finally:
        gate.open()
        await client.close()
    assert client.dialer.banner is not None and client.dialer.banner.pid == first_pid
    events = [n for n in notes if n["params"].get("conversationId") == cid]
    assert not [n for n in notes if n["method"] == SNAPSHOT]  # replayed, not redrawn
    seqs = [n["params"]["seq"] for n in events if "seq" in n["params"]]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # no gap, no duplicate
    deltas = "".join(
        str(n["params"].get("delta", "")) for n in events if n["method"] == "item/delta"
    )
    assert deltas == "before the drop, after it."
    states = [n["params"]["state"] for n in notes if n["method"] == CONNECTION]
    assert states == ["reconnecting", "connected"]
    ended = [n for n in events if n["method"] == "turn/ended"]
    assert [n["params"]["status"] for n in ended] == ["completed"]


async def test_a_remote_daemon_restarted_meanwhile_is_said_and_redrawn(
    sshd: Sshd, remote: Daemon, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_SSH, sshd.ssh_command)
    client = await Client.connect(
        remote=parse("remotebox"), backoff=Backoff(first=0.05, factor=2.0, cap=0.2)
    )
    try:
        cid = await new_conversation(client, str(remote.workdir))
        fake.enqueue(Reply().text("kept"))
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
        await collect_until(client, lambda n: n["method"] == "turn/ended", timeout=30)
        stop_any_server(remote)  # the daemon over there stops; the next bridge starts another
        notes = await collect_until(
            client,
            lambda n: n["method"] == CONNECTION and n["params"]["state"] == "connected",
            timeout=60,
        )
    finally:
        await client.close()
    assert notes[-1]["params"].get("restarted") is True
    assert [n["params"]["conversationId"] for n in notes if n["method"] == SNAPSHOT] == [cid]
