"""A daemon's start imports only what serving needs (docs/design.md, "Start-up imports"): the
HTTP client of the model providers, httpx (whose package also imports its command-line client,
and with it rich and pygments), is imported by the first call to a provider, not at start; the
gitignore matcher of the file tools (pathspec) by their first walk; uvicorn's command line
(click) never. Seen in the real daemon's own
import log (`PYTHONPROFILEIMPORTTIME`), which Python writes to stderr."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import completed_items, new_conversation, run_turn
from tests.support.running import running_daemon

# Packages whose import a start must not pay for. click: uvicorn's command line, which its
# package `__init__` imports (docs/design.md, "A cold exec, end to end").
NOT_AT_START = ("httpx", "httpx_sse", "rich", "pygments", "pathspec", "click")


# Modules of ours that neither a start nor a first turn needs, imported at their first use
# (docs/design.md, "Exec's spawn and the daemon's first turn"): the custom commands' loader,
# the working tree's diff, the prober of local servers' windows (none configured here).
NOT_FOR_A_FIRST_TURN = (
    "openvaala_server.custom_commands",
    "openvaala_server.runtime.worktree_diff",
    "openvaala_server.models.probe",
)


def imported_modules(d: Daemon) -> set[str]:
    """The modules the daemon has imported so far, from its import log."""
    log = d.log_path.read_text(errors="replace")
    return {line.split("|")[-1].strip() for line in log.splitlines() if "import time:" in line}


def imported(d: Daemon) -> set[str]:
    """The top-level packages the daemon has imported so far, from its import log."""
    return {name.split(".")[0] for name in imported_modules(d)}


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeProvider, Daemon]]:
    with FakeProvider(api_key=None) as fake:
        config = fake.config_toml("fake") + '[agents.default]\nmodel = "fake"\n'
        env = {"PYTHONPROFILEIMPORTTIME": "1"}
        with running_daemon(tmp_path_factory.mktemp("imports"), config, env) as d:
            yield fake, d


async def test_a_started_daemon_has_not_imported_the_providers_http_client(
    setup: tuple[FakeProvider, Daemon],
) -> None:
    fake, d = setup
    client = await d.client()  # served: the start is over
    try:
        conversations = await client.request("conversation/list", {})
        assert conversations["conversations"] == []
        at_start = imported(d)
        assert "openvaala_server" in at_start  # the log is there and names the daemon's modules
        assert sorted(at_start & set(NOT_AT_START)) == []

        # The first turn imports it and talks to the provider through it.
        fake.enqueue(Reply().text("hello from the provider"))
        cid = await new_conversation(client, str(d.workdir))
        notes = await run_turn(client, cid, "hi")
        assert notes[-1]["params"]["status"] == "completed"
        texts = [item["text"] for item in completed_items(notes, "agent_message")]
        assert texts == ["hello from the provider"]
        assert "httpx" in imported(d)
    finally:
        await client.close()


async def turn_answered(fake: FakeProvider, d: Daemon, text: str) -> None:
    """A turn on a new conversation, which the provider answers with `text`."""
    client = await d.client()
    try:
        fake.enqueue(Reply().text(text))
        cid = await new_conversation(client, str(d.workdir))
        notes = await run_turn(client, cid, "hi")
        assert notes[-1]["params"]["status"] == "completed"
        texts = [item["text"] for item in completed_items(notes, "agent_message")]
        assert texts == [text]
    finally:
        await client.close()


async def test_a_turn_without_mcp_servers_does_not_import_the_mcp_sdk(
    setup: tuple[FakeProvider, Daemon],
) -> None:
    """The MCP SDK's import (~0.5 s, more than the rest of a first turn) was paid by every
    daemon's first turn, for the merge of a conversation's own MCP tools it did not have."""
    fake, d = setup
    await turn_answered(fake, d, "no tools from elsewhere")
    assert sorted(imported(d) & {"mcp", "mcp_types"}) == []


async def test_a_first_turn_does_without_the_modules_of_other_requests(
    setup: tuple[FakeProvider, Daemon],
) -> None:
    fake, d = setup
    await turn_answered(fake, d, "nothing else needed")
    assert sorted(imported_modules(d) & set(NOT_FOR_A_FIRST_TURN)) == []
