"""`!command`: a shell command the user runs themself (docs/protocol.md, "shell/run"). It runs
as the agent's `shell` tool does, in the agent's sandbox, and its output joins the conversation
as a user message (`origin: "shell"`), so the model sees it with the next turn."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from openvaala_server import errors
from openvaala_server.domain import records as r
from openvaala_server.protocol import payloads as w
from openvaala_server.runtime.item_factory import new_item
from openvaala_server.tools.base import ToolContext
from openvaala_server.tools.shell import ShellTool

if TYPE_CHECKING:
    from openvaala_server.domain.meta import ConversationMeta
    from openvaala_server.runtime.manager import ConversationManager


def shell_message(command: str, output: str, is_error: bool) -> str:
    """What the model reads: the command, and its output as the tool would have shown it."""
    failed = " (it failed)" if is_error else ""
    fence = "```"
    while fence in output:
        fence += "`"
    return f"I ran this shell command myself{failed}:\n$ {command}\n{fence}\n{output}\n{fence}"


async def run(runtime: ConversationManager, cid: str, command: str) -> w.ShellRunResult:
    conv = await runtime.open(cid)
    session = conv.root
    if session.turn is not None or session.compacting:
        raise errors.TurnRunning("a turn is running: interrupt it first, or wait for it to end")
    tool, arguments = ShellTool(), {"command": command}
    # Its changes join the checkpoints of the conversation's last turn, as a shell call of that
    # turn would, so `/diff`, undo and rewind see them (docs/design.md, "`!command` changes are
    # checkpointed"). Before the first turn there is none to join: not captured.
    last_turn = _last_turn(conv.meta, session.session_id)
    capture = None
    if last_turn is not None:
        capture = await conv.checkpoints.before_call(session, last_turn, tool, arguments)
    try:
        outcome = await tool.run(
            arguments,
            ToolContext(
                cwd=Path(conv.cwd),
                emit_output=lambda chunk: None,
                output_limit=runtime.config.server.tool_output_limit,
                confinement=runtime.confinement_for(conv, session),
            ),
        )
    finally:
        if capture is not None:
            with anyio.CancelScope(shield=True):  # what it changed stays restorable
                await conv.checkpoints.after_call(capture)
    if session.turn is not None or session.compacting:
        # A turn started while the command ran: its output would land inside that turn's
        # history, between the model's calls. Refused, with the output, which is not lost
        # (docs/protocol.md, shell/run).
        raise errors.TurnRunning(
            "a turn started while the command ran: its output was not added to the "
            "conversation (run it again once the turn has ended)",
            output=outcome.output,
            isError=outcome.is_error,
        )
    if not conv.persisted:  # saved with its first message, as `input/send` does
        await runtime.persist_first(conv, f"!{command}")
    item = new_item(
        r.USER_MESSAGE,
        session.session_id,
        None,
        status=r.COMPLETED,
        origin="shell",
        text=shell_message(command, outcome.output, outcome.is_error),
    )
    await conv.persist_items(session, [item])
    return {"itemId": item["itemId"], "output": outcome.output, "isError": outcome.is_error}


def _last_turn(meta: ConversationMeta | None, session_id: str) -> str | None:
    """The id of the last turn `session_id` ran, None before its first."""
    session = meta.sessions.get(session_id) if meta is not None else None
    return session.last_turn_id if session is not None else None
