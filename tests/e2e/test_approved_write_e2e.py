"""What was approved is what is written, through the real daemon and real bubblewrap: the user
approves a write through a symlink that leads outside the workspace; between the approval
request and the answer, a concurrently running sandboxed subagent re-points the link at another
file; the approved write must not reach the new target, and fails saying why
(docs/security.md, "Approvals")."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.server.tools.sandbox_places import Places, make_places
from tests.support.daemon import Daemon
from tests.support.events import Note, collect_until, method_is, turn_ended
from tests.support.roles import role


def _config(fake: FakeProvider) -> str:
    agent = 'model = "main"\nsandbox = "workspace"\napproval = "escalate"\n'
    return (
        fake.config_toml("main")
        + f'\n[agents.default]\ndescription = "root"\ninstructions = "ROLE: root"\n{agent}'
        + f'\n[agents.worker]\ndescription = "helper"\ninstructions = "ROLE: worker"\n{agent}'
        + "\n[retry]\nbase_delay_s = 0.01\nmax_delay_s = 0.05\n"
    )


@pytest.fixture
def places() -> Iterator[Places]:
    """A workspace and a directory outside it, outside /tmp (a sandboxed command's /tmp is its
    own)."""
    made = make_places()
    yield made
    shutil.rmtree(made.root, ignore_errors=True)


def _tool_result(notes: list[Note], sid: str, name: str) -> dict[str, Any]:
    items: list[dict[str, Any]] = [
        n["params"]["item"]
        for n in notes
        if n["method"] == "item/completed"
        and n["params"]["item"]["type"] == "tool_result"
        and n["params"]["item"]["sessionId"] == sid
        and n["params"]["item"]["name"] == name
    ]
    [item] = items
    return item


async def test_a_link_re_pointed_after_the_approval_does_not_redirect_the_write(
    daemon_factory: Any, fake_openai: FakeProvider, places: Places
) -> None:
    approved = places.outside / "approved.txt"
    victim = places.outside / "victim.txt"
    victim.write_text("untouched\n")
    link = places.work / "notes.txt"
    link.symlink_to(approved)
    d: Daemon = daemon_factory(config=_config(fake_openai), start=False)
    d.workdir = places.work
    d.start()

    repoint = Gate()
    fake_openai.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "worker", "task": "tidy the notes"}),
        Reply().tool_call("write_file", {"path": "notes.txt", "content": "approved text\n"}),
        Reply().text("wrote it"),
        when=lambda q: role(q) == "root",
    )
    fake_openai.enqueue(
        Reply().wait(repoint).tool_call("shell", {"command": f"ln -sfn {victim} notes.txt"}),
        Reply().text("re-pointed"),
        when=lambda q: role(q) == "worker",
    )
    client: Client = await d.client()
    try:
        created = await client.request("conversation/create", {"cwd": str(places.work)})
        cid = created["conversation"]["conversationId"]
        root = created["conversation"]["rootSessionId"]
        await client.subscribe(cid)
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})

        asked: Note = (await collect_until(client, method_is("approval/requested")))[-1]["params"]
        assert asked["tool"] == "write_file" and str(approved) in asked["summary"]
        # While the question waits, the subagent's sandboxed command re-points the link.
        repoint.open()
        notes = await collect_until(
            client,
            lambda n: n["method"] == "turn/ended" and n["params"]["sessionId"] != root,
        )
        worker = notes[-1]["params"]["sessionId"]
        assert not _tool_result(notes, worker, "shell")["isError"]
        assert link.resolve() == victim

        await client.respond_approval(cid, asked["approvalId"], "allow")
        notes = await collect_until(client, turn_ended(root))
        result = _tool_result(notes, root, "write_file")
        assert result["isError"]
        assert "not to what you approved" in result["output"]
        assert str(victim) in result["output"] and "Nothing was written" in result["output"]
        assert victim.read_text() == "untouched\n"
        assert not approved.exists()
    finally:
        await client.close()
