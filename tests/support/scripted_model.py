"""A scripted model provider for in-process runtime tests: the provider seam, nothing else.

It implements `models.base.Provider` — what the HTTP providers and the demo model implement —
and answers each model call with the next scripted reply, in call order. Everything behind it
(the turn loop, retries, tools, compaction, the inbox, the hub) is the real runtime.

    script.text("Hello", "!")                 # a streamed answer
    script.tool_call("read_file", {"path": "a.txt"})
    script.fail(ModelError("provider_unavailable", "busy", retryable=True))
    gate = script.hold("partial")             # streams "partial", then waits for gate.set()

A call with nothing scripted fails the test loudly (an unexpected model call is a bug).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from openvaala_server.config import ModelConfig
from openvaala_server.models.base import (
    ModelError,
    ModelEvent,
    ModelRequest,
    ReasoningDelta,
    ReasoningDone,
    StreamEnded,
    TextDelta,
    ToolCallRequested,
    UsageReported,
)
from openvaala_server.protocol.json_types import JsonObject

Step = ModelEvent | ModelError | asyncio.Event
# Which calls a reply is for (None: any call); a call takes the first reply it matches.
When = Callable[[ModelRequest], bool] | None


@dataclass
class Call:
    """One model call as the provider received it."""

    request: ModelRequest
    cancelled: bool = False


class Script:
    def __init__(self) -> None:
        self.replies: list[tuple[When, list[Step]]] = []
        self.calls: list[Call] = []
        self._ids = itertools.count(1)

    # --- scripting -------------------------------------------------------------------------

    def reply(
        self,
        *steps: Step,
        usage: tuple[int, int] = (100, 10),
        stop: str = "",
        when: When = None,
    ) -> None:
        """A reply of these steps, then usage and the end (`stop` defaults from the steps);
        `when` reserves it for the calls it accepts (a subagent's, say)."""
        calls = any(isinstance(step, ToolCallRequested) for step in steps)
        ending: list[Step] = [
            UsageReported(*usage),
            StreamEnded(stop or ("tool_calls" if calls else "stop")),
        ]
        self.replies.append((when, [*steps, *ending]))

    def text(self, *chunks: str, when: When = None) -> None:
        self.reply(*(TextDelta(chunk) for chunk in chunks), when=when)

    def thinking(self, thought: str, answer: str) -> None:
        self.reply(ReasoningDelta(thought), ReasoningDone(thought), TextDelta(answer))

    def tool_call(self, name: str, arguments: JsonObject, text: str = "", when: When = None) -> str:
        """A reply calling one tool (after `text`, if any); returns the call's id."""
        call_id = f"call_{next(self._ids)}"
        steps: list[Step] = [TextDelta(text)] if text else []
        steps.append(ToolCallRequested(call_id, name, dict(arguments), json.dumps(arguments)))
        self.reply(*steps, when=when)
        return call_id

    def fail(self, error: ModelError, *before: str) -> None:
        """A reply that streams `before`, then fails with `error`."""
        self.replies.append((None, [*(TextDelta(chunk) for chunk in before), error]))

    def hold(self, *before: str) -> asyncio.Event:
        """A reply that streams `before` and then waits: set the returned event to let it end
        (with the usual usage and end), or interrupt the turn while it waits."""
        gate = asyncio.Event()
        self.reply(*(TextDelta(chunk) for chunk in before), gate)
        return gate

    # --- observing -------------------------------------------------------------------------

    @property
    def requests(self) -> list[ModelRequest]:
        return [call.request for call in self.calls]

    # --- the provider seam -----------------------------------------------------------------

    def provider(self, config: ModelConfig) -> ScriptedProvider:
        """The `providers` factory the runtime is built with."""
        return ScriptedProvider(self, config)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        call = Call(request)
        self.calls.append(call)
        match = next(
            (n for n, (when, _) in enumerate(self.replies) if when is None or when(request)), None
        )
        if match is None:
            raise AssertionError(f"unscripted model call ({request.purpose}): {request.items}")
        _when, steps = self.replies.pop(match)
        try:
            for step in steps:
                if isinstance(step, asyncio.Event):
                    await step.wait()
                elif isinstance(step, ModelError):
                    raise step
                else:
                    yield step
        except asyncio.CancelledError:
            call.cancelled = True
            raise


class ScriptedProvider:
    def __init__(self, script: Script, config: ModelConfig) -> None:
        self.script = script
        self.config = config

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        return self.script._stream(request)

    def retire(self) -> None:
        """Nothing to release."""

    async def aclose(self) -> None:
        """Nothing to release."""
