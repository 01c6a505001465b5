"""A grant covers exactly what the prompt showed, through the real daemon and real bubblewrap:
"allow for this conversation" of `git push origin HEAD:main` or `python3 -c 'print(1+1)'` outside
the sandbox does not let `--receive-pack=…` or another `python3 -c …` through, and a command with
a shell operator is answered honestly: allowed once, with the reason (docs/security.md,
"Approvals")."""

from __future__ import annotations

from typing import Any

from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import Note, collect_until, method_is, new_conversation, turn_ended


def _config(fake: FakeProvider) -> str:
    agent = '\n[agents.default]\ndescription = "test"\nmodel = "fake"\napproval = "escalate"\n'
    return fake.config_toml("fake") + agent


def _outside(command: str) -> Reply:
    arguments = {"command": command, "outside_sandbox": True, "justification": "needs it"}
    return Reply().tool_call("shell", arguments)


async def _asked(client: Client, command: str) -> Note:
    params: Note = (await collect_until(client, method_is("approval/requested")))[-1]["params"]
    assert params["arguments"]["command"] == command
    return params


async def test_grants_outside_the_sandbox_cover_the_exact_command_only(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))
    marker = d.workdir / "pwned"
    push = "git push origin HEAD:main"
    hostile_push = f"git push --receive-pack='touch {marker}' origin HEAD:main"
    calc = "python3 -c 'print(1+1)'"
    hostile_calc = f'python3 -c \'open("{marker}", "w")\''
    fake_openai.enqueue(
        _outside(push),
        _outside(hostile_push),
        _outside(calc),
        _outside(hostile_calc),
        _outside(calc),
        Reply().text("done"),
    )
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})

        first = await _asked(client, push)
        # The prompt says what the grant would cover before anyone answers.
        assert first["grantScope"] == (
            f"shell: exactly the command `{push}`, outside the sandbox; nothing else"
        )
        answer = await client.respond_approval(cid, first["approvalId"], "allow_conversation")
        assert answer["decision"] == "allow_conversation" and "notGranted" not in answer
        # The same program with an option that runs another program asks again.
        again = await _asked(client, hostile_push)
        await client.respond_approval(cid, again["approvalId"], "deny")

        python = await _asked(client, calc)
        await client.respond_approval(cid, python["approvalId"], "allow_conversation")
        other = await _asked(client, hostile_calc)
        await client.respond_approval(cid, other["approvalId"], "deny")
        # The exact command granted runs without asking.
        notes = await collect_until(client, turn_ended())
        assert not [n for n in notes if n["method"] == "approval/requested"]
        outputs = [
            n["params"]["item"]["output"]
            for n in notes
            if n["method"] == "item/completed" and n["params"]["item"]["type"] == "tool_result"
        ]
        assert outputs and outputs[-1].startswith("2")
        assert not marker.exists()
    finally:
        await client.close()


async def test_a_command_with_a_shell_operator_is_allowed_once_and_says_so(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))
    command = "echo one > a.txt"
    fake_openai.enqueue(_outside(command), _outside(command), Reply().text("done"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
        first = await _asked(client, command)
        assert first["grantScope"] is None and "shell operator" in first["noGrantReason"]
        answer = await client.respond_approval(cid, first["approvalId"], "allow_conversation")
        # Not "allowed for this conversation": allowed once, and why.
        assert answer["decision"] == "allow"
        assert "shell operator" in answer["notGranted"]
        # Every client hears the same, and the next identical call asks again.
        notes = await collect_until(client, method_is("approval/requested"))
        [resolved] = [n["params"] for n in notes if n["method"] == "approval/resolved"]
        assert resolved["decision"] == "allow" and resolved["notGranted"] == answer["notGranted"]
        second = notes[-1]["params"]
        assert second["arguments"]["command"] == command
        await client.respond_approval(cid, second["approvalId"], "deny")
        await collect_until(client, turn_ended())
        assert (d.workdir / "a.txt").read_text() == "one\n"
    finally:
        await client.close()
