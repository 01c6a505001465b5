"""The item kinds that map, as a Codex client sees them: reasoning, the plan, a file change
(asked first, then its diff), and a failing provider as `error` with the closest codexErrorInfo."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any

from tests.codex.flows import demo_config, items_of, run_turn, start_thread
from tests.codex.harness import CodexClient, open_client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.toolbox import MCP_SERVER

Factory = Callable[..., Daemon]


async def test_reasoning_streams_as_a_summary(codex: CodexClient, daemon: Daemon) -> None:
    thread = await start_thread(codex, str(daemon.workdir))
    _, mark = await run_turn(codex, thread, "think: about codex")
    [reasoning] = items_of(codex, mark, "item/completed", "reasoning")
    streamed = "".join(d["delta"] for d in codex.after(mark, "item/reasoning/summaryTextDelta"))
    assert reasoning["summary"] == [streamed] and "about codex" in streamed


async def test_the_plan_is_a_turn_plan(codex: CodexClient, daemon: Daemon) -> None:
    thread = await start_thread(codex, str(daemon.workdir))
    plan = {
        "explanation": "Two steps",
        "plan": [
            {"step": "Read the code", "status": "completed"},
            {"step": "Fix the bug", "status": "in_progress"},
        ],
    }
    turn, mark = await run_turn(codex, thread, f"call: update_plan {json.dumps(plan)}")
    [updated] = codex.after(mark, "turn/plan/updated")
    assert updated["turnId"] == turn and updated["explanation"] == "Two steps"
    assert updated["plan"] == [
        {"step": "Read the code", "status": "completed"},
        {"step": "Fix the bug", "status": "inProgress"},
    ]
    [item] = items_of(codex, mark, "item/completed", "plan")
    assert "[x] Read the code" in item["text"] and "[~] Fix the bug" in item["text"]


def _accept(message: dict[str, Any]) -> object:
    return {"decision": "accept"}


async def test_a_file_change_is_approved_then_shown_with_its_diff(daemon_factory: Factory) -> None:
    daemon = daemon_factory(demo_config(approval="always"))
    (daemon.workdir / "keep.py").write_text("a = 1\nb = 2\n")
    codex = await open_client(daemon, "websocket")
    try:
        codex.answer = _accept
        thread = await start_thread(codex, str(daemon.workdir))
        edit = {"path": "keep.py", "old_text": "b = 2", "new_text": "b = 3"}
        turn, mark = await run_turn(codex, thread, f"call: edit_file {json.dumps(edit)}")
        [asked] = codex.requests
        assert asked["method"] == "item/fileChange/requestApproval"
        [change] = items_of(codex, mark, "item/completed", "fileChange")
        assert change["id"] == asked["params"]["itemId"] and change["status"] == "completed"
        [file] = change["changes"]
        assert file["path"] == "keep.py" and file["kind"] == {"type": "update", "move_path": None}
        assert "+b = 3" in file["diff"]
        [diff] = codex.after(mark, "turn/diff/updated")
        assert diff["turnId"] == turn and "-b = 2" in diff["diff"]
        assert (daemon.workdir / "keep.py").read_text() == "a = 1\nb = 3\n"
    finally:
        await codex.close()


async def _echo_listed(codex: CodexClient) -> bool:
    status = await codex.request("mcpServerStatus/list", {})
    return "echo" in status["data"][0]["tools"]


async def test_an_mcp_tool_call_and_the_mcp_servers(daemon_factory: Factory) -> None:
    config = (
        demo_config()
        + 'tools = ["read_file", "mcp:*"]\n'
        + f"\n[mcp_servers.t]\ncommand = {json.dumps(sys.executable)}\n"
        + f'args = [{json.dumps(str(MCP_SERVER))}, "stdio"]\n'
        + "startup_timeout_s = 45\ntrust = true\n"
    )
    daemon = daemon_factory(config)
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        before = await codex.request("mcpServerStatus/list", {})
        assert [(s["name"], s["tools"]) for s in before["data"]] == [("t", {})]  # not started yet
        # A turn starts its agent's servers in the background; the model is offered a server's
        # tools from the first request after it is ready (docs/design.md).
        await run_turn(codex, thread, "hello")
        async with asyncio.timeout(45):
            while not await _echo_listed(codex):  # noqa: ASYNC110 - polled: the status has no event
                await asyncio.sleep(0.1)
        _, mark = await run_turn(codex, thread, 'call: mcp__t__echo {"text": "from codex"}')
        [call] = items_of(codex, mark, "item/completed", "mcpToolCall")
        assert (call["server"], call["tool"], call["status"]) == ("t", "echo", "completed")
        assert call["arguments"] == {"text": "from codex"}
        assert "from codex" in call["result"]["content"][0]["text"]
        after = await codex.request("mcpServerStatus/list", {})
        assert "echo" in after["data"][0]["tools"]
    finally:
        await codex.close()


async def test_a_failing_provider_is_an_error_with_codex_error_info(
    daemon_factory: Factory, fake_openai: FakeProvider
) -> None:
    config = (
        fake_openai.config_toml("fake")
        + '\n[agents.default]\ndescription = "test"\nmodel = "fake"\n'
        + "\n[retry]\nbase_delay_s = 0.01\nmax_delay_s = 0.05\n"
    )
    daemon = daemon_factory(config)
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        fake_openai.enqueue(Reply.server_error(), Reply().text("Second try."))
        _, mark = await run_turn(codex, thread, "hello")
        [retrying] = codex.after(mark, "error")
        assert retrying["willRetry"] is True
        assert retrying["error"]["codexErrorInfo"] == {
            "responseStreamConnectionFailed": {"httpStatusCode": None}
        }
        assert codex.after(mark, "turn/completed")[0]["turn"]["status"] == "completed"

        fake_openai.enqueue(Reply.unauthorized())
        _, mark = await run_turn(codex, thread, "again")
        [failed] = codex.after(mark, "error")
        assert failed["willRetry"] is False
        assert failed["error"]["codexErrorInfo"] == "unauthorized"
        [ended] = codex.after(mark, "turn/completed")
        assert ended["turn"]["status"] == "failed"
        assert ended["turn"]["error"]["codexErrorInfo"] == "unauthorized"
    finally:
        await codex.close()
