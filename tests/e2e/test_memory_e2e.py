"""Memory across conversations and `/init`, through a real daemon and a provider faked at the
wire: `memory/remember` (what the TUI's `#`, the web UI's and the editors' commands call) and the
model's `remember` tool, which asks like any write, append to plain files a new conversation is
given; `memory/read` and `memory/write` view and edit them; `conversation/init` asks the agent
to write AGENTS.md."""

from __future__ import annotations

from typing import Any

import pytest

from openvaala_server import prompts
from openvaala_server.client import Client, RpcError
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import collect_until, method_is, new_conversation, run_turn, turn_ended


def _config(fake: FakeProvider) -> str:
    return fake.config_toml("fake") + '\n[agents.default]\ndescription = "x"\nmodel = "fake"\n'


def _system(fake: FakeProvider) -> str:
    return str(fake.last_request.json["messages"][0]["content"])


async def _open(daemon_factory: Any, fake: FakeProvider) -> tuple[Daemon, Client, str]:
    """A daemon on the fake provider, a client, and a conversation in its working directory."""
    d: Daemon = daemon_factory(_config(fake))
    client = await d.client()
    return d, client, await new_conversation(client, str(d.workdir))


async def _memory_parts(client: Client, cid: str) -> list[Any]:
    trace = await client.request("conversation/context", {"conversationId": cid})
    return [p for p in trace["parts"] if p["kind"] == "memory"]


async def test_remembered_notes_reach_every_later_conversation(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d, client, first = await _open(daemon_factory, fake_openai)
    project = d.workdir / ".openvaala" / "MEMORY.md"
    user = d.config_path.parent / "MEMORY.md"

    saved = await client.request(
        "memory/remember", {"conversationId": first, "text": "Run the tests with uv run pytest"}
    )
    assert saved == {
        "scope": "project",
        "path": str(project),
        "text": "- Run the tests with uv run pytest\n",
        "exists": True,
    }
    await client.request(
        "memory/remember",
        {"conversationId": first, "scope": "user", "text": "Answer in\nshort sentences"},
    )
    assert project.read_text() == "- Run the tests with uv run pytest\n"
    assert user.read_text() == "- Answer in\n  short sentences\n"
    # The conversation it was said in shows it at once.
    assert [p["label"] for p in await _memory_parts(client, first)] == [
        f"Memory (user): {user}",
        f"Memory (project): {project}",
    ]

    second = await new_conversation(client, str(d.workdir))
    fake_openai.enqueue(Reply().text("ok"))
    await run_turn(client, second, "hello")
    sent = _system(fake_openai)
    assert "- Answer in\n  short sentences" in sent
    assert "- Run the tests with uv run pytest" in sent
    parts = await _memory_parts(client, second)
    assert "".join(p["text"] for p in parts) in sent

    files = (await client.request("memory/read", {"conversationId": second}))["files"]
    assert [(f["scope"], f["path"], f["exists"]) for f in files] == [
        ("project", str(project), True),
        ("user", str(user), True),
    ]
    await client.request(
        "memory/write", {"conversationId": second, "scope": "project", "text": "- Use make\n"}
    )
    assert project.read_text() == "- Use make\n"
    fake_openai.enqueue(Reply().text("ok"))
    await run_turn(client, second, "again")
    assert "- Use make" in _system(fake_openai) and "uv run pytest" not in _system(fake_openai)

    for params, param in (
        ({"text": "  "}, "text"),
        ({"text": "x", "scope": "team"}, "scope"),
    ):
        with pytest.raises(RpcError) as bad:
            await client.request("memory/remember", {"conversationId": second, **params})
        assert bad.value.kind == "invalid_params" and bad.value.data.get("param") == param
    await client.close()


async def test_the_models_remember_tool_asks_and_a_new_conversation_sees_the_note(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d, client, cid = await _open(daemon_factory, fake_openai)
    note = {"text": "The user prefers tabs", "scope": "user"}
    fake_openai.enqueue(
        Reply().tool_call("remember", note),
        Reply().text("Noted."),
        Reply().tool_call("remember", {"text": "Never deploy on Fridays", "scope": "user"}),
        Reply().text("Not noted."),
    )
    user = d.config_path.parent / "MEMORY.md"
    await client.request("input/send", {"conversationId": cid, "text": "remember: tabs"})
    asked = (await collect_until(client, method_is("approval/requested")))[-1]["params"]
    assert str(user) in asked["summary"]
    assert not user.exists()  # nothing written before the user says yes
    await client.respond_approval(cid, asked["approvalId"], "allow")
    await collect_until(client, turn_ended())
    assert user.read_text() == "- The user prefers tabs\n"

    await client.request("input/send", {"conversationId": cid, "text": "and fridays"})
    asked = (await collect_until(client, method_is("approval/requested")))[-1]["params"]
    await client.respond_approval(cid, asked["approvalId"], "deny")
    await collect_until(client, turn_ended())
    assert user.read_text() == "- The user prefers tabs\n"

    other = await new_conversation(client, str(d.workdir))
    fake_openai.enqueue(Reply().text("hi"))
    await run_turn(client, other, "hello")
    assert "- The user prefers tabs" in _system(fake_openai)
    tools = [t["function"]["name"] for t in fake_openai.last_request.json["tools"]]
    assert "remember" in tools
    await client.close()


async def test_init_asks_the_agent_to_write_agents_md(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _open(daemon_factory, fake_openai)
    fake_openai.enqueue(Reply().text("Wrote AGENTS.md."))
    sent = await client.request("conversation/init", {"conversationId": cid})
    assert sent["disposition"] == "started"
    await collect_until(client, turn_ended())
    last = fake_openai.last_request.json["messages"][-1]
    assert last == {"role": "user", "content": prompts.init_request()}
    assert "AGENTS.md" in last["content"]
    await client.close()
