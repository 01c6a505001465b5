"""Codex's `cancel` answer to an approval is a refusal that also stops the turn ("The turn will
also be immediately interrupted", the schema's words), unlike `decline`, after which the agent
goes on (docs/codex.md "Approvals")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.codex.flows import demo_config, items_of, start_thread, text_input
from tests.codex.harness import open_client
from tests.support.daemon import Daemon

Factory = Callable[..., Daemon]


def _cancel(message: dict[str, Any]) -> object:
    return {"decision": "cancel"}


async def test_cancel_refuses_the_command_and_interrupts_the_turn(
    daemon_factory: Factory,
) -> None:
    daemon = daemon_factory(demo_config(approval="always", pace_ms=50))
    codex = await open_client(daemon, "websocket")
    try:
        thread = await start_thread(codex, str(daemon.workdir))
        codex.answer = _cancel
        mark = len(codex.notes)
        answer = await codex.request(
            "turn/start", {"threadId": thread, "input": text_input("run: echo never")}
        )
        turn = answer["turn"]["id"]
        ended = await codex.wait_for(
            "turn/completed", lambda p: p["turn"]["id"] == turn, after=mark
        )
        assert ended["turn"]["status"] == "interrupted"
        [refused] = items_of(codex, mark, "item/completed", "commandExecution")
        assert refused["status"] == "declined" and refused["exitCode"] is None
    finally:
        await codex.close()
