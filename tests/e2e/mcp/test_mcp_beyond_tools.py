"""MCP beyond plain tool calls (issue 34, point 6), through the real daemon and a real SDK-built
server: progress notifications stream live to clients and extend the call's time-out, the
server's roots are the calling conversation's working directory, and a tool that requires task
augmentation is not offered."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from openvaala_server.client.connection import RpcError
from openvaala_server.protocol.display import mcp_server_state
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import daemon_config
from tests.support.daemon import Daemon
from tests.support.events import completed_items, new_conversation, run_turn

Factory = Callable[..., Daemon]
TOOL_TIMEOUT_S = 4
STEPS = 6  # one a second: longer in all than tool_timeout_s, never that long without progress


def config(fake: FakeProvider) -> str:
    extra = f"startup_timeout_s = 45\ntool_timeout_s = {TOOL_TIMEOUT_S}\n"
    return daemon_config(fake, tools='["mcp:t"]', extra=extra)


@pytest.mark.timeout(180)
async def test_progress_roots_and_task_only_tools(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake))
    fake.enqueue(
        Reply().tool_call("mcp__t__roots", {}),
        Reply().tool_call("mcp__t__steps", {"count": STEPS, "seconds": 1}),
        Reply().text("done"),
    )
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        notes = await run_turn(client, cid, "go")
        roots, steps = completed_items(notes, "tool_result")
        # Roots: the conversation's working directory.
        assert roots["output"] == d.workdir.resolve().as_uri() or roots["output"] == (
            d.workdir.as_uri()
        )
        # Progress: shown live, and the call outlived tool_timeout_s while progress came.
        assert steps["output"] == f"{STEPS} steps" and not steps["isError"]
        live = "".join(
            n["params"]["delta"]
            for n in notes
            if n["method"] == "item/delta" and n["params"]["itemId"] == steps["itemId"]
        )
        assert f"[progress 2/{STEPS}] step 2 of {STEPS}\n" in live
        assert f"[progress {STEPS}/{STEPS}]" in live
        # A tool that requires task augmentation is not offered; the others are.
        offered = {t["function"]["name"] for t in fake.requests[-1].json["tools"]}
        assert "mcp__t__steps" in offered and "mcp__t__task_only" not in offered
        [server] = (await client.request("mcp/list"))["servers"]
        assert "task_only" not in server["tools"]
    finally:
        await client.close()


@pytest.mark.timeout(180)
async def test_resources_and_prompts(daemon_factory: Factory, fake: FakeProvider) -> None:
    d = daemon_factory(config(fake))
    fake.enqueue(Reply().tool_call("mcp__t__echo", {"text": "start"}), Reply().text("ok"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await run_turn(client, cid, "start it")  # the server is ready from now on
        [server] = (await client.request("mcp/list"))["servers"]
        assert server["resources"] == [{"uri": "notes://today", "name": "today"}]
        [prompt] = server["prompts"]
        assert prompt["name"] == "review" and prompt["arguments"] == ["file"]
        shown = mcp_server_state(server)  # every client's /mcp wording
        assert "resources: @t:notes://today" in shown and "prompts: /mcp__t__review" in shown

        # The model reads a resource with read_mcp_resource, offered since the server has some.
        fake.enqueue(
            Reply().tool_call("read_mcp_resource", {"server": "t", "uri": "notes://today"}),
            Reply().tool_call("read_mcp_resource", {"server": "t", "uri": "notes://nope"}),
            Reply().text("noted"),
        )
        notes = await run_turn(client, cid, "what is on today?")
        read, missing = completed_items(notes, "tool_result")
        assert read["output"] == "Water the ficus at noon." and not read["isError"]
        assert missing["isError"] and "reading notes://nope failed" in missing["output"]
        spec = next(
            t["function"]
            for t in fake.requests[-1].json["tools"]
            if t["function"]["name"] == "read_mcp_resource"
        )
        assert "notes://today" in spec["description"]

        # What a client asks for: a filled-in prompt, a resource's text.
        filled = await client.request(
            "mcp/getPrompt", {"server": "t", "name": "review", "arguments": {"file": "app.py"}}
        )
        assert filled == {"text": "Review app.py for bugs, briefly."}
        text = await client.request("mcp/readResource", {"server": "t", "uri": "notes://today"})
        assert text == {"text": "Water the ficus at noon."}
        with pytest.raises(RpcError) as err:
            await client.request("mcp/getPrompt", {"server": "nope", "name": "review"})
        assert err.value.kind == "not_found" and "'nope'" in err.value.message
    finally:
        await client.close()
