"""`turn/start`'s per-turn overrides change the OpenVaala conversation (docs/codex.md "Per-turn
overrides"): `cwd` moves it, plan mode (`collaborationMode`) is the agent named `plan` and
leaving it goes back; one daemon for the module (each test has its own conversation)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.codex.overrides import PlanMode, cwd_choice
from tests.codex.flows import demo_config, module_daemon, start_thread, text_input
from tests.codex.harness import CodexClient, open_client
from tests.codex.schema_check import check_response
from tests.support.daemon import Daemon

CONFIG = demo_config() + (
    '\n[agents.plan]\ndescription = "Plans, changes nothing"\nmodel = "demo"\n'
    'sandbox = "read-only"\n'
)


@pytest.fixture(scope="module")
def plan_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with module_daemon(tmp_path_factory, "overrides", CONFIG) as daemon:
        yield daemon


@pytest.fixture
async def codex(plan_daemon: Daemon) -> AsyncIterator[CodexClient]:
    client = await open_client(plan_daemon, "websocket")
    try:
        yield client
    finally:
        await client.close()


def _mode(kind: str) -> dict[str, Any]:
    return {"mode": kind, "settings": {"model": "demo", "reasoning_effort": None}}


async def _turn(codex: CodexClient, thread: str, **overrides: Any) -> dict[str, Any]:
    mark = len(codex.notes)
    params = {"threadId": thread, "input": text_input("hello"), **overrides}
    answer = await codex.request("turn/start", params)
    turn = answer["turn"]["id"]
    await codex.wait_for("turn/completed", lambda p: p["turn"]["id"] == turn, after=mark)
    return dict(answer)


async def _conversation(daemon: Daemon, thread: str) -> dict[str, Any]:
    async with await daemon.client() as client:
        read: Any = await client.request(
            "conversation/subscribe", {"conversationId": thread.replace("-", "")}
        )
    return dict(read["snapshot"]["conversation"])


async def test_a_turn_s_cwd_moves_the_conversation(
    codex: CodexClient, plan_daemon: Daemon, tmp_path: Path
) -> None:
    thread = await start_thread(codex, str(plan_daemon.workdir))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    await _turn(codex, thread, cwd=str(elsewhere))
    assert (await _conversation(plan_daemon, thread))["cwd"] == str(elsewhere)
    # A directory that does not exist is refused, naming it; the conversation stays.
    missing = str(tmp_path / "missing")
    reply = await codex.call(
        "turn/start", {"threadId": thread, "input": text_input("x"), "cwd": missing}
    )
    assert missing in reply["error"]["message"], reply
    assert (await _conversation(plan_daemon, thread))["cwd"] == str(elsewhere)


async def test_plan_mode_is_the_plan_agent_and_leaving_it_goes_back(
    codex: CodexClient, plan_daemon: Daemon
) -> None:
    modes = await codex.request("collaborationMode/list", {})
    check_response("collaborationMode/list", modes)
    assert {m["name"]: m["mode"] for m in modes["data"]} == {"default": "default", "plan": "plan"}
    thread = await start_thread(codex, str(plan_daemon.workdir))

    await _turn(codex, thread, collaborationMode=_mode("plan"))
    assert (await _conversation(plan_daemon, thread))["agent"] == "plan"
    # The TUI sends its mode with every turn: still plan.
    await _turn(codex, thread, collaborationMode=_mode("plan"))
    assert (await _conversation(plan_daemon, thread))["agent"] == "plan"

    mark = len(codex.notes)
    await _turn(codex, thread, collaborationMode=_mode("default"))
    assert (await _conversation(plan_daemon, thread))["agent"] == "default"
    settings = await codex.wait_for("thread/settings/updated", after=mark)
    assert settings["threadSettings"]["collaborationMode"]["mode"] == "default"


async def test_the_tui_s_settings_update_enters_plan_mode_between_turns(
    codex: CodexClient, plan_daemon: Daemon
) -> None:
    """The Codex TUI's Shift+Tab sends `thread/settings/update`, not a turn."""
    thread = await start_thread(codex, str(plan_daemon.workdir))
    update = {"threadId": thread, "collaborationMode": _mode("plan")}
    assert await codex.request("thread/settings/update", update) == {}
    assert (await _conversation(plan_daemon, thread))["agent"] == "plan"
    update["collaborationMode"] = _mode("default")
    await codex.request("thread/settings/update", update)
    assert (await _conversation(plan_daemon, thread))["agent"] == "default"


async def test_plan_mode_is_left_after_the_thread_is_opened_again(
    codex: CodexClient, plan_daemon: Daemon
) -> None:
    """The Codex TUI resumes a thread each time it shows it again (back from a subagent's
    thread, Alt+←): leaving plan mode afterwards still goes back to the agent before."""
    thread = await start_thread(codex, str(plan_daemon.workdir))
    update = {"threadId": thread, "collaborationMode": _mode("plan")}
    await codex.request("thread/settings/update", update)
    await codex.request("thread/resume", {"threadId": thread})
    update["collaborationMode"] = _mode("default")
    await codex.request("thread/settings/update", update)
    assert (await _conversation(plan_daemon, thread))["agent"] == "default"


async def test_plan_mode_without_a_plan_agent_is_refused_clearly(daemon: Daemon) -> None:
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        reply = await codex.call(
            "turn/start",
            {"threadId": thread, "input": text_input("x"), "collaborationMode": _mode("plan")},
        )
        assert reply["error"]["data"]["param"] == "collaborationMode"
        assert "[agents.plan]" in reply["error"]["message"]
        # Nothing half-done: the next turn in the default mode runs on the default agent.
        await _turn(codex, thread, collaborationMode=_mode("default"))
        assert (await _conversation(daemon, thread))["agent"] == "default"
    finally:
        await codex.close()


def test_a_value_the_client_still_holds_is_no_choice() -> None:
    assert cwd_choice("/a/b/", None, "/a/b") is None  # the same directory, written otherwise
    assert cwd_choice("/a", "/a", "/b") is None  # another client moved it: /a is only held
    assert cwd_choice("/c", "/a", "/b") == "/c"
    plan = PlanMode()
    assert plan.agent_choice("s", "default", "plan") is None  # set to plan elsewhere: stays
    assert plan.agent_choice("s", "plan", "coder") == "plan"
    assert plan.agent_choice("s", "default", "plan") == "coder"
