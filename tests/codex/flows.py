"""Steps the Codex protocol tests share: open a thread, run a turn to its end."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from tests.codex.harness import CodexClient
from tests.support.daemon import Daemon, kill_leftovers, make_daemon, stop_any_server

Params = dict[str, Any]


def demo_config(*, pace_ms: int = 0, approval: str = "escalate") -> str:
    """The demo model behind the default agent: `pace_ms` between words (a turn that lasts, to
    steer or follow it), `approval` the agent's policy (`always`: every command asks)."""
    return (
        f'[models.demo]\nprovider = "demo"\npace_ms = {pace_ms}\n\n'
        f'[agents.default]\ndescription = "General assistant"\nmodel = "demo"\n'
        f'approval = "{approval}"\n'
    )


def text_input(text: str) -> list[Params]:
    return [{"type": "text", "text": text, "text_elements": []}]


async def start_thread(codex: CodexClient, cwd: str) -> str:
    started = await codex.request(
        "thread/start", {"cwd": cwd, "sandbox": "read-only", "config": {}}
    )
    return str(started["thread"]["id"])


async def run_turn(codex: CodexClient, thread: str, text: str) -> tuple[str, int]:
    """Start a turn and wait for its end: (turn id, index of the first note of the turn)."""
    mark = len(codex.notes)
    answer = await codex.request("turn/start", {"threadId": thread, "input": text_input(text)})
    turn = answer["turn"]["id"]
    await codex.wait_for(
        "turn/completed", lambda p: p["threadId"] == thread and p["turn"]["id"] == turn, after=mark
    )
    return turn, mark


def items_of(codex: CodexClient, mark: int, method: str, kind: str) -> list[Params]:
    return [p["item"] for p in codex.after(mark, method) if p["item"]["type"] == kind]


@contextlib.contextmanager
def module_daemon(factory: pytest.TempPathFactory, name: str, config: str) -> Iterator[Daemon]:
    """A daemon for a whole test module (its tests share it: each starts its own threads)."""
    daemon = make_daemon(factory.mktemp(name), config)
    daemon.start()
    try:
        yield daemon
    finally:
        daemon.stop()
        stop_any_server(daemon)
        kill_leftovers(daemon)


async def answered_elsewhere(
    daemon: Daemon, codex: CodexClient, thread: str, text: str, decision: str
) -> tuple[Params, int]:
    """Start a turn whose command asks, and answer it from an OpenVaala client (not `codex`),
    then wait for the turn's end: (the request `codex` was asked, index of the turn's first
    note)."""
    cid = thread.replace("-", "")
    async with await daemon.client() as other:
        await other.subscribe(cid)
        mark = len(codex.notes)
        await codex.request("turn/start", {"threadId": thread, "input": text_input(text)})
        asked = await codex.wait_request("item/commandExecution/requestApproval")
        pending: Any = await other.request("conversation/subscribe", {"conversationId": cid})
        [approval] = pending["snapshot"]["approvals"]
        await other.request(
            "approval/respond",
            {"conversationId": cid, "approvalId": approval["approvalId"], "decision": decision},
        )
        await codex.wait_for("turn/completed", after=mark)
    return asked, mark
