"""The hooks of one turn (docs/configuration.md, "Hooks"): the configured commands run at its
events, and their notices, kept until they may join the history.

A notice never goes between the tool calls of a model reply and their results (providers refuse
that): the runner adds what `take` returns once a step's calls all have results, and at the turn's
end.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openvaala_server.config import Config
from openvaala_server.domain import records as r
from openvaala_server.domain.hooks import HookRun, block_reason, matching, notice_text
from openvaala_server.domain.inbox import Input
from openvaala_server.runtime.hooks import run_hook
from openvaala_server.runtime.item_factory import new_item
from openvaala_server.tools.base import ToolResult

if TYPE_CHECKING:
    from openvaala_server.runtime.conversation import LiveConversation
    from openvaala_server.runtime.session import LiveSession

HOOK_NOTICE = "hook"


class TurnHooks:
    def __init__(
        self, conv: LiveConversation, session: LiveSession, turn_id: str, config: Config
    ) -> None:
        self.conv, self.session, self.turn_id, self.config = conv, session, turn_id, config
        self._pending: list[r.Item] = []

    def take(self) -> list[r.Item]:
        """The notices of the runs so far, once."""
        pending, self._pending = self._pending, []
        return pending

    async def _run(
        self, event: str, fields: dict[str, Any], tool: str | None = None
    ) -> list[HookRun]:
        hooks = matching(self.config.hooks, event, tool)
        if not hooks:
            return []
        # The agent's own limits, as its shell commands get them (not a call's approved escape).
        confinement = self.conv.runtime.confinement_for(self.conv, self.session)
        cwd = Path(self.conv.cwd)
        payload = {
            "event": event,
            "conversationId": self.conv.conversation_id,
            "sessionId": self.session.session_id,
            "turnId": self.turn_id,
            "cwd": str(cwd),
            **fields,
        }
        runs: list[HookRun] = []
        for hook in hooks:
            run = await run_hook(hook, payload, cwd, confinement)
            runs.append(run)
            text = notice_text(run)
            if text is not None:
                self._pending.append(
                    new_item(
                        r.NOTICE,
                        self.session.session_id,
                        self.turn_id,
                        status=r.COMPLETED,
                        kind=HOOK_NOTICE,
                        text=text,
                    )
                )
            if event == "pre_tool" and run.failed:
                break  # the call is blocked: the hooks after it have nothing to judge
        return runs

    async def pre_tool(self, call: r.Item) -> ToolResult | None:
        """The result a blocked call gets instead of running (the hook's stderr), or None."""
        name = str(call["name"])
        fields = {"tool": name, "callId": call["callId"], "arguments": call.get("arguments")}
        for run in await self._run("pre_tool", fields, name):
            if run.failed:
                return ToolResult(block_reason(run, name), is_error=True)
        return None

    async def post_tool(self, call: r.Item, result: r.Item) -> None:
        name = str(call["name"])
        fields = {
            "tool": name,
            "callId": call["callId"],
            "arguments": call.get("arguments"),
            "output": result.get("output", ""),
            "isError": bool(result.get("isError")),
        }
        await self._run("post_tool", fields, name)

    async def prompt_submit(self, inputs: Sequence[Input]) -> None:
        for inp in inputs:
            if inp.origin == "user":
                await self._run("prompt_submit", {"prompt": inp.text, "inputId": inp.input_id})

    async def turn_end(self, status: str) -> None:
        await self._run("turn_end", {"status": status})
