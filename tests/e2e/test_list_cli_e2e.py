"""`openvaala list` and short ids, through the real command and a real daemon: the listing,
`--json`, `--all`, `--search`, and `export` / `exec --resume` taking a prefix of an id."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn


def _config(fake: FakeProvider) -> str:
    return fake.config_toml("fake") + '\n[agents.default]\ndescription = "test"\nmodel = "fake"\n'


def openvaala(d: Daemon, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "openvaala_server", *args],
        env=d.env,
        cwd=d.workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def _two_conversations(d: Daemon, fake: FakeProvider) -> tuple[str, str]:
    client = await d.client()
    fake.default_reply = Reply().text("ok")
    older = await new_conversation(client, str(d.workdir))
    await run_turn(client, older, "about the parser")
    newer = await new_conversation(client, str(d.workdir))
    await run_turn(client, newer, "about the lexer")
    await client.request("conversation/rename", {"conversationId": older, "title": "Parser"})
    await client.request("conversation/archive", {"conversationId": older})
    await client.close()
    return older, newer


async def test_list_shows_short_ids_all_and_search(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))
    older, newer = await _two_conversations(d, fake_openai)

    shown = openvaala(d, "list")
    assert shown.returncode == 0, shown.stderr
    header, *rows = shown.stdout.splitlines()
    assert header.split()[:2] == ["ID", "UPDATED"]
    assert [row.split()[0] for row in rows] == [newer[:8]]  # the archived one is not listed
    assert str(d.workdir).replace(str(d.home.parent), "") in rows[0]

    everything = openvaala(d, "list", "--all", "--json")
    assert everything.returncode == 0, everything.stderr
    listed = json.loads(everything.stdout)
    assert {c["shortId"]: c["archived"] for c in listed} == {newer[:8]: False, older[:8]: True}
    assert "(archived)" in openvaala(d, "list", "--all").stdout

    found = json.loads(openvaala(d, "list", "--search", "lexer", "--json").stdout)
    assert [c["conversationId"] for c in found] == [newer]


async def test_commands_take_a_unique_prefix_and_refuse_a_wrong_one(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))
    older, newer = await _two_conversations(d, fake_openai)

    exported = openvaala(d, "export", older[:8])  # archived conversations count too
    assert exported.returncode == 0, exported.stderr
    assert (d.workdir / f"{older}.openvaala.tar").is_file()

    fake_openai.default_reply = Reply().text("resumed fine")
    resumed = openvaala(d, "exec", "--resume", newer[:6], "and again")
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed fine" in resumed.stdout
    assert f"--resume {newer}" in resumed.stderr

    unknown = "0" * 8 if not (older + newer).startswith("0" * 8) else "f" * 8
    for args, says in [
        (["exec", "--resume", unknown, "hi"], f"no conversation id starts with {unknown}"),
        (["exec", "--resume", newer[:4], "hi"], "too short"),
        (["export", unknown], f"no conversation id starts with {unknown}"),
    ]:
        refused = openvaala(d, *args)
        assert refused.returncode == 2, refused.stderr
        assert says in refused.stderr
