"""No agent gets more than its parent, through the real daemon and real bubblewrap: a `workspace`
agent starts an `ops` agent configured `sandbox = "off"`, `approval = "never"`, which tries to
write to $HOME (docs/security.md, "Subagents"). One fake provider scripts both agents; requests
are told apart by the agent's instructions (`ROLE: ...`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server import user_home
from tests.support.daemon import Daemon
from tests.support.events import Note, collect_until, completed_items, method_is, turn_ended
from tests.support.roles import role

fake_home = user_home.fake_home  # the fixture, used by name


def _config(fake: FakeProvider, root_approval: str) -> str:
    return (
        fake.config_toml("main")
        + '\n[agents.default]\ndescription = "root"\nmodel = "main"\ninstructions = "ROLE: root"\n'
        + 'sandbox = "workspace"\n'
        + f'approval = "{root_approval}"\n'
        + '\n[agents.ops]\ndescription = "Runs operations"\ninstructions = "ROLE: ops"\n'
        + 'sandbox = "off"\napproval = "never"\nnetwork = true\n'
        + "\n[retry]\nbase_delay_s = 0.01\nmax_delay_s = 0.05\n"
    )


def _is(who: str) -> Any:
    return lambda req: role(req) == who


async def _start(daemon_factory: Any, fake: FakeProvider, approval: str) -> tuple[Client, str]:
    d: Daemon = daemon_factory(config=_config(fake, approval))
    client = await d.client()
    created = await client.request("conversation/create", {"cwd": str(d.workdir)})
    cid = created["conversation"]["conversationId"]
    await client.subscribe(cid)
    return client, cid


def _ops_attack(home: Path) -> Reply:
    return (
        Reply()
        .tool_call("shell", {"command": f"echo pwned > {home}/from-shell"})
        .tool_call("write_file", {"path": str(home / "from-write"), "content": "pwned"})
    )


async def test_a_spawned_ops_agent_runs_within_its_workspace_parent(
    daemon_factory: Any, fake_openai: FakeProvider, fake_home: Path
) -> None:
    client, cid = await _start(daemon_factory, fake_openai, "escalate")
    fake_openai.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "ops", "task": "tidy the home directory"}),
        Reply().text("started ops"),
        when=_is("root"),
    )
    fake_openai.enqueue(_ops_attack(fake_home), Reply().text("ops done"), when=_is("ops"))
    await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})

    # Starting an agent configured with more than the parent asks the user, saying why.
    spawn_ask: Note = (await collect_until(client, method_is("approval/requested")))[-1]["params"]
    assert spawn_ask["tool"] == "spawn_agent" and spawn_ask["agent"] == "default"
    assert 'sandbox = "off"' in spawn_ask["reason"] and "ops" in spawn_ask["reason"]
    await client.respond_approval(cid, spawn_ask["approvalId"], "allow", None)

    notes = await collect_until(client, method_is("session/started"))
    [child] = [n["params"]["session"] for n in notes if n["method"] == "session/started"]
    assert child["agent"] == "ops"
    notes = await collect_until(client, turn_ended(child["sessionId"]))
    results = completed_items(notes, "tool_result")
    shell, write = [i for i in results if i["sessionId"] == child["sessionId"]]
    # The shell command ran in the parent's `workspace` sandbox, where $HOME is read-only; the
    # write outside the workspace is refused (ops's own "never": nobody may let it out), asking
    # no one.
    assert "Read-only file system" in shell["output"]
    assert write["isError"] and "outside the working directory" in write["output"]
    assert '"never"' in write["output"]
    assert not [n for n in notes if n["method"] == "approval/requested"]
    assert not (fake_home / "from-shell").exists()
    assert not (fake_home / "from-write").exists()
    assert os.listdir(fake_home) == []


async def test_a_parent_that_is_never_asked_cannot_start_a_wider_agent(
    daemon_factory: Any, fake_openai: FakeProvider, fake_home: Path
) -> None:
    client, cid = await _start(daemon_factory, fake_openai, "never")
    fake_openai.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "ops", "task": "tidy the home directory"}),
        Reply().text("could not start ops"),
        when=_is("root"),
    )
    fake_openai.enqueue(_ops_attack(fake_home), Reply().text("ops done"), when=_is("ops"))
    await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
    notes = await collect_until(client, turn_ended())
    [result] = completed_items(notes, "tool_result")
    assert result["isError"]
    assert "'ops'" in result["output"] and 'sandbox = "off"' in result["output"]
    assert '"never"' in result["output"]
    assert not [n for n in notes if n["method"] in ("session/started", "approval/requested")]
    assert not [q for q in fake_openai.requests if role(q) == "ops"]
    assert os.listdir(fake_home) == []
