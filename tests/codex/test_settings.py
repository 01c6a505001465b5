"""The model Codex sends with every turn, and the settings another client changes: an agent
switched elsewhere brings its model, and Codex hears of it (docs/codex.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.codex.flows import demo_config, run_turn, start_thread, text_input
from tests.codex.harness import CodexClient, open_client
from tests.support.daemon import Daemon

Factory = Callable[..., Daemon]
CONFIG = demo_config() + (
    '\n[models.other]\nprovider = "demo"\npace_ms = 0\n'
    '\n[agents.coder]\ndescription = "Writes code"\nmodel = "other"\n'
)


async def _turn_with_model(codex: CodexClient, thread: str, model: str) -> None:
    mark = len(codex.notes)
    answer = await codex.request(
        "turn/start", {"threadId": thread, "input": text_input("hello"), "model": model}
    )
    turn = answer["turn"]["id"]
    await codex.wait_for("turn/completed", lambda p: p["turn"]["id"] == turn, after=mark)


async def test_another_client_s_agent_keeps_its_model(daemon_factory: Factory) -> None:
    daemon = daemon_factory(CONFIG)
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        cid = thread.replace("-", "")
        await _turn_with_model(codex, thread, "demo")
        async with await daemon.client() as other:
            mark = len(codex.notes)
            await other.request("conversation/setAgent", {"conversationId": cid, "agent": "coder"})
            # Codex hears that the thread's model changed.
            updated = await codex.wait_for("thread/settings/updated", after=mark)
            assert updated["threadId"] == thread
            assert updated["threadSettings"]["model"] == "other"
            # The Codex TUI sends the model it held: that is no choice of the user's.
            await _turn_with_model(codex, thread, "demo")
            read: Any = await other.request("conversation/subscribe", {"conversationId": cid})
            assert read["snapshot"]["conversation"]["model"] == "other"
            assert read["snapshot"]["conversation"]["agent"] == "coder"
            # A model the user picks in Codex (/model) is still the conversation's.
            await _turn_with_model(codex, thread, "demo")
            await _turn_with_model(codex, thread, "other")
            await _turn_with_model(codex, thread, "demo")
            read = await other.request("conversation/subscribe", {"conversationId": cid})
            assert read["snapshot"]["conversation"]["model"] == "demo"
    finally:
        await codex.close()


async def test_a_subagent_thread_s_turn_does_not_set_its_model(daemon_factory: Factory) -> None:
    """The model Codex holds, sent with a turn on a subagent's thread, is no choice: the
    subagent keeps its agent's model (it was set by hand on every such turn)."""
    daemon = daemon_factory(CONFIG)
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        mark = len(codex.notes)
        await run_turn(codex, thread, "spawn: say hi")
        child = (await codex.wait_for("thread/started", after=mark))["thread"]
        await codex.wait_for("turn/completed", lambda p: p["threadId"] == child["id"], after=mark)
        await _turn_with_model(codex, child["id"], child["model"])
        async with await daemon.client() as other:
            read: Any = await other.request(
                "conversation/subscribe", {"conversationId": thread.replace("-", "")}
            )
        [session] = [
            s
            for s in read["snapshot"]["sessions"]
            if s["sessionId"] == child["id"].replace("-", "")
        ]
        assert session["modelChosen"] is False  # still its agent's model, not set by hand
    finally:
        await codex.close()
