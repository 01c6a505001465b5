"""Steps the Codex protocol tests share: open a thread, run a turn to its end."""

from __future__ import annotations

from typing import Any

from tests.codex.harness import CodexClient

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
