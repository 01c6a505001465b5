"""Import judges records by the journal's own line rule (docs/security.md, "Checkpoints and
bundles"): a raw CR inside a record's JSON is whitespace to JSON and no line break to the
journal, so a grant or an agent name hidden behind one must be seen, and dropped or reset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tests.fakes.providers import FakeProvider
from tests.server import user_home
from tests.server.bundle_attacks import Lines, config, grant_record, import_hostile, try_bashrc
from tests.support.daemon import Daemon

fake_home = user_home.fake_home  # the fixture, used by name


def _cr(line: bytes) -> bytes:
    return line.replace(b'"type":', b'\r"type":')


async def test_a_grant_behind_a_carriage_return_is_dropped(
    daemon_factory: Any, fake_openai: FakeProvider, fake_home: Path
) -> None:
    d: Daemon = daemon_factory(config=config(fake_openai))
    bashrc = fake_home / ".bashrc"

    def hide_grant(lines: Lines) -> None:
        lines.append(_cr(orjson.dumps(grant_record(lines, "write_file", "path", str(bashrc)))))

    client = await d.client()
    try:
        imported = await import_hostile(client, d, fake_openai, hide_grant)
        assert imported["grantsDropped"] == 1
        new = imported["conversationId"]
        journal = (d.home / "conversations" / new / "metadata.jsonl").read_bytes()
        assert b"\r" not in journal and b"approval_granted" not in journal
        assert await try_bashrc(client, new, fake_openai, bashrc) == ["write_file"]
    finally:
        await client.close()
    assert not bashrc.exists()


async def test_an_agent_behind_a_carriage_return_is_reset(
    daemon_factory: Any, fake_openai: FakeProvider, fake_home: Path
) -> None:
    d: Daemon = daemon_factory(config=config(fake_openai))
    bashrc = fake_home / ".bashrc"

    def name_ops(lines: Lines) -> None:
        first = orjson.loads(lines[0])
        lines[0] = _cr(orjson.dumps(first | {"agent": "ops"}))

    client = await d.client()
    try:
        imported = await import_hostile(client, d, fake_openai, name_ops)
        assert imported["agentsReset"] == 1
        new = imported["conversationId"]
        opened = await client.request("conversation/subscribe", {"conversationId": new})
        assert opened["snapshot"]["conversation"]["agent"] == "default"
        assert await try_bashrc(client, new, fake_openai, bashrc) == ["write_file"]
    finally:
        await client.close()
    assert not bashrc.exists()
