"""What the model is told before the conversation (docs/design.md, "What the model is told"),
through a real daemon and a provider faked at the wire: the base prompt, the agent's
instructions, the environment block, the user's and the project's AGENTS.md files (a monorepo
of three levels) and memory reach the request in order, byte for byte as `conversation/context`
shows them, and follow a branch switch, another agent and another working directory."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from openvaala_server import prompts
from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn

INSTRUCTION_KINDS = {"base", "system", "environment", "user_md", "agents_md", "memory"}


def _agents() -> str:
    """Top-level keys come before the first table: this string goes first."""
    return (
        'project_doc_names = ["AGENTS.md", "CLAUDE.md"]\n'
        + '\n[agents.default]\ndescription = "writes code"\nmodel = "fake"\n'
        + 'instructions = "Be brief."\n'
        + '\n[agents.reviewer]\ndescription = "reviews code"\nmodel = "fake"\n'
        + 'sandbox = "read-only"\napproval = "never"\ntools = ["read_file", "grep"]\n'
    )


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _monorepo(d: Daemon) -> Path:
    """A git repository with instructions at three levels, a user file and two memory files;
    returns the innermost directory."""
    root = d.workdir
    app = root / "packages" / "app"
    app.mkdir(parents=True)
    (root / "AGENTS.md").write_text("ROOT: run make test.\n")
    (root / "packages" / "CLAUDE.md").write_text("PACKAGES: one package per directory.\n")
    (app / "AGENTS.md").write_text("APP: use the app's fixtures.\n")
    (d.config_path.parent / "AGENTS.md").write_text("USER: answer in English.\n")
    (d.config_path.parent / "MEMORY.md").write_text("- the user prefers tabs\n")
    (root / ".openvaala").mkdir()
    (root / ".openvaala" / "MEMORY.md").write_text("- this project uses uv\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "start")
    (app / "new.py").write_text("x = 1\n")
    return app


async def _context(client: Client, cid: str) -> list[Any]:
    trace = await client.request("conversation/context", {"conversationId": cid})
    return [p for p in trace["parts"] if p["kind"] in INSTRUCTION_KINDS]


def _system(fake: FakeProvider) -> str:
    body = fake.last_request.json
    if "system" in body:  # Anthropic
        return str(body["system"])
    return str(body["messages"][0]["content"])


async def test_the_request_carries_every_part_in_order_as_the_cockpit_shows_it(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(_agents() + fake_openai.config_toml("fake"))
    app = _monorepo(d)
    root = d.workdir
    client = await d.client()
    cid = await new_conversation(client, str(app))
    fake_openai.enqueue(*(Reply().text(f"answer {n}") for n in range(4)))

    await run_turn(client, cid, "hello")
    parts = await _context(client, cid)
    sent = _system(fake_openai)
    assert sent == "".join(p["text"] for p in parts)
    assert [p["kind"] for p in parts] == [
        "base",
        "system",
        "environment",
        "user_md",
        "agents_md",
        "agents_md",
        "agents_md",
        "memory",
        "memory",
    ]
    config_dir = d.config_path.parent
    assert [p["label"] for p in parts[3:]] == [
        f"User instructions: {config_dir / 'AGENTS.md'}",
        f"Project instructions: {root / 'AGENTS.md'}",
        f"Project instructions: {root / 'packages' / 'CLAUDE.md'}",
        f"Project instructions: {app / 'AGENTS.md'}",
        f"Memory (user): {config_dir / 'MEMORY.md'}",
        f"Memory (project): {root / '.openvaala' / 'MEMORY.md'}",
    ]
    assert parts[0]["label"] == "Base prompt (built-in, default)"
    assert parts[0]["text"] == prompts.base_prompt("default")
    marks = ("USER:", "ROOT:", "PACKAGES:", "APP:", "prefers tabs", "uses uv")
    order = [sent.index(s) for s in marks]
    assert order == sorted(order)
    environment = parts[2]["text"]
    assert f"Working directory: {app}" in environment
    assert f"Git: repository {root}, branch main" in environment
    assert "?? packages/app/new.py" in environment
    assert "You are the agent 'default'." in environment
    assert "may write only inside the working directory, without network access" in environment
    assert "Agents you may spawn: default (writes code); reviewer (reviews code)" in environment
    assert parts[2]["tokens"] < 300

    # Another branch: the next request says so.
    _git(root, "checkout", "-q", "-b", "feature")
    await run_turn(client, cid, "again")
    sent = _system(fake_openai)
    assert "branch feature" in sent and "branch main" not in sent
    assert sent == "".join(p["text"] for p in await _context(client, cid))

    # Another agent: its limits, no agents to spawn, no instructions of the default agent.
    await client.request("conversation/setAgent", {"conversationId": cid, "agent": "reviewer"})
    await run_turn(client, cid, "review")
    sent = _system(fake_openai)
    assert "You are the agent 'reviewer'. Commands run in a read-only sandbox" in sent
    assert "nobody is asked" in sent
    assert "Agents you may spawn" not in sent and "Be brief." not in sent
    assert sent == "".join(p["text"] for p in await _context(client, cid))

    # Another working directory: the chain ends there.
    await client.request("conversation/setCwd", {"conversationId": cid, "cwd": str(root)})
    await run_turn(client, cid, "up")
    sent = _system(fake_openai)
    assert f"Working directory: {root}\n" in sent
    assert "ROOT:" in sent and "PACKAGES:" not in sent and "APP:" not in sent
    assert sent == "".join(p["text"] for p in await _context(client, cid))
    await client.close()


async def test_base_instructions_false_removes_the_prompt_and_a_file_replaces_it(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    config = (
        fake_openai.config_toml("fake")
        + '\n[agents.plain]\ndescription = "x"\nmodel = "fake"\nbase_instructions = false\n'
        + '\n[agents.own]\ndescription = "y"\nmodel = "fake"\nbase_instructions = "mine.txt"\n'
    )
    d: Daemon = daemon_factory(config, start=False)
    (d.config_path.parent / "mine.txt").write_text("You are a careful pair programmer.\n")
    d.start()
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir), agent="plain")
    fake_openai.enqueue(Reply().text("one"), Reply().text("two"))

    await run_turn(client, cid, "hello")
    parts = await _context(client, cid)
    assert [p["kind"] for p in parts] == ["environment"]
    sent = _system(fake_openai)
    assert sent.startswith("<environment>") and "# How you work" not in sent

    await client.request("conversation/setAgent", {"conversationId": cid, "agent": "own"})
    await run_turn(client, cid, "again")
    parts = await _context(client, cid)
    assert parts[0]["label"] == f"Base prompt ({d.config_path.parent / 'mine.txt'})"
    sent = _system(fake_openai)
    assert sent.startswith("You are a careful pair programmer.\n\n<environment>")
    assert sent == "".join(p["text"] for p in parts)
    await client.close()


async def test_an_anthropic_model_gets_the_anthropic_notes(
    daemon_factory: Any, fake_anthropic: FakeProvider
) -> None:
    d: Daemon = daemon_factory(
        fake_anthropic.config_toml("fake")
        + '\n[agents.default]\ndescription = "x"\nmodel = "fake"\n'
    )
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    fake_anthropic.enqueue(Reply().text("hi"))
    await run_turn(client, cid, "hello")
    parts = await _context(client, cid)
    assert parts[0]["label"] == "Base prompt (built-in, anthropic)"
    assert _system(fake_anthropic) == "".join(p["text"] for p in parts)
    assert prompts.base_prompt("anthropic") in _system(fake_anthropic)
    assert "Git: the working directory is not in a git repository" in _system(fake_anthropic)
    await client.close()


async def test_instruction_files_over_the_cap_are_cut_with_a_notice(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(
        "project_doc_max_chars = 100\n"
        + fake_openai.config_toml("fake")
        + '\n[agents.default]\ndescription = "x"\nmodel = "fake"\n'
    )
    root = d.workdir
    inner = root / "inner"
    inner.mkdir()
    _git(root, "init", "-q")
    (root / "AGENTS.md").write_text("R" * 80)
    (inner / "AGENTS.md").write_text("N" * 60)
    client = await d.client()
    cid = await new_conversation(client, str(inner))
    fake_openai.enqueue(Reply().text("hi"))
    await run_turn(client, cid, "hello")
    parts = await _context(client, cid)
    docs = [p for p in parts if p["kind"] == "agents_md"]
    assert [p["label"] for p in docs] == [
        f"Project instructions: {root / 'AGENTS.md'} (cut)",
        f"Project instructions: {inner / 'AGENTS.md'}",
    ]
    sent = _system(fake_openai)
    assert "R" * 40 + "\n[… cut after 40 characters: 40 characters over the 100-character" in sent
    assert "R" * 41 not in sent and "N" * 60 in sent
    assert sent == "".join(p["text"] for p in parts)
    await client.close()
