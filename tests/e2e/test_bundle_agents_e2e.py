"""The agent an imported bundle names is trusted only when it is configured here and asks for no
more than the default agent, tools and limits included (docs/security.md, "Checkpoints and
bundles"): a name configured nowhere yet, or an agent with a tool the default agent lacks,
becomes the default agent (`agentsReset`)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.fakes.providers import FakeProvider
from tests.server.bundle_attacks import Lines, import_hostile
from tests.support.daemon import Daemon


def _config(fake: FakeProvider) -> str:
    return fake.config_toml("fake") + (
        '\n[agents.default]\ndescription = "test"\nmodel = "fake"\ntools = ["read_file"]\n'
        '\n[agents.builder]\ndescription = "builds"\nmodel = "fake"\n'
        'tools = ["read_file", "shell"]\n'
        '\n[agents.big]\ndescription = "big"\nmodel = "fake"\ntools = ["read_file"]\n'
        "limits = {processes = 1000000}\n"
        '\n[agents.reader]\ndescription = "reads"\nmodel = "fake"\ntools = ["read_file"]\n'
        'sandbox = "read-only"\n'
    )


@pytest.mark.parametrize(
    ("named", "runs_as"),
    [("ghost", "default"), ("builder", "default"), ("big", "default"), ("reader", "reader")],
)
async def test_an_imported_agent_is_the_default_unless_known_and_no_wider(
    daemon_factory: Any, fake_openai: FakeProvider, named: str, runs_as: str
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))

    def name_agent(lines: Lines) -> None:
        lines[0] = orjson.dumps(orjson.loads(lines[0]) | {"agent": named})

    client = await d.client()
    try:
        imported = await import_hostile(client, d, fake_openai, name_agent)
        assert imported["agentsReset"] == (0 if runs_as == named else 1)
        opened = await client.request(
            "conversation/subscribe", {"conversationId": imported["conversationId"]}
        )
        assert opened["snapshot"]["conversation"]["agent"] == runs_as
    finally:
        await client.close()
