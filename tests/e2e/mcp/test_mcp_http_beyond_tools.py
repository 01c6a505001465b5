"""Resources, prompts and list changes over streamable HTTP (issue 34, point 6), through the real
daemon and a real SDK-built server served over HTTP on 127.0.0.1: a user attaches a resource and
runs a prompt, the model reads a resource, and a tool the server adds at run time is offered."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import STARTUP_S, last_user_text
from tests.support.daemon import Daemon
from tests.support.events import Note, collect_until, completed_items, new_conversation, run_turn

Factory = Callable[..., Daemon]


def config(fake: FakeProvider, url: str) -> str:
    return (
        fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\ntools = ["mcp:web"]\n'
        + f'\n[mcp_servers.web]\nurl = "{url}"\nstartup_timeout_s = {STARTUP_S:g}\ntrust = true\n'
    )


@pytest.mark.timeout(180)
async def test_resources_prompts_and_list_changes_over_http(
    daemon_factory: Factory, fake: FakeProvider, http_server: str
) -> None:
    d = daemon_factory(config(fake, http_server))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        # A user's attachment (what `@web:notes://today` sends) and a prompt (what
        # `/mcp__web__review file=app.py` sends): both start the server and ask it.
        attached = await client.request(
            "mcp/readResource", {"server": "web", "uri": "notes://today"}
        )
        assert attached == {"text": "Water the ficus at noon."}
        prompt = await client.request(
            "mcp/getPrompt", {"server": "web", "name": "review", "arguments": {"file": "app.py"}}
        )
        assert prompt == {"text": "Review app.py for bugs, briefly."}
        [server] = (await client.request("mcp/list"))["servers"]
        assert server["status"] == "ready"
        assert server["resources"] == [{"uri": "notes://today", "name": "today"}]
        assert [p["name"] for p in server["prompts"]] == ["review"]

        # The prompt sent as the message; the model reads the resource itself, then grows the
        # server's lists.
        fake.enqueue(
            Reply().tool_call("read_mcp_resource", {"server": "web", "uri": "notes://today"}),
            Reply().tool_call("mcp__web__grow", {}),
            Reply().text("reviewed"),
        )
        notes = await run_turn(client, cid, prompt["text"])
        assert last_user_text(fake) == "Review app.py for bugs, briefly."
        read, grown = completed_items(notes, "tool_result")
        assert read["output"] == "Water the ficus at noon." and not read["isError"]
        assert grown["output"] == "grown"

        def listed_again(note: Note) -> bool:
            return note["method"] == "mcp/statusChanged" and "grown" in note["params"]["tools"]

        if not any(listed_again(n) for n in notes):
            notes = await collect_until(client, listed_again, timeout=STARTUP_S)
        state = next(n for n in notes if listed_again(n))["params"]
        assert {"uri": "notes://later", "name": "later"} in state["resources"]
        later = await client.request("mcp/readResource", {"server": "web", "uri": "notes://later"})
        assert later == {"text": "Later: repot it."}
        fake.enqueue(Reply().tool_call("mcp__web__grown", {}), Reply().text("done"))
        [result] = completed_items(await run_turn(client, cid, "use it"), "tool_result")
        assert result["output"] == "grown here" and not result["isError"]
    finally:
        await client.close()
