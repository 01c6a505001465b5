"""The agent loop: one turn of one session.

Call the model, run the tools it asks for, feed the results back, repeat until it answers.
Before each model call the session's steering input joins the turn. A turn ends `completed`,
`failed` (with a clear error) or `interrupted`; an interrupt keeps everything produced so far:
streamed text is persisted as it was, unfinished items are marked interrupted, and a `notice` item
tells the model on the next turn that the user interrupted this one.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import anyio
import anyio.lowlevel

from openvaala_server import errors
from openvaala_server.domain import denials, recovery
from openvaala_server.domain import records as r
from openvaala_server.domain.compaction_policy import decide
from openvaala_server.domain.inbox import Input
from openvaala_server.domain.status import TurnOutcome, end_turn, last_status
from openvaala_server.models.base import (
    ModelError,
    ModelRequest,
    ReasoningDelta,
    ReasoningDone,
    StreamEnded,
    TextDelta,
    ToolCallRequested,
    ToolCallStarted,
    UsageReported,
)
from openvaala_server.models.retry import RetryPolicy
from openvaala_server.protocol import methods
from openvaala_server.runtime import early, turn_end, warmup
from openvaala_server.runtime.agent_chain import effective_tools
from openvaala_server.runtime.approvals import approve
from openvaala_server.runtime.compaction import compact
from openvaala_server.runtime.conversation import LiveConversation
from openvaala_server.runtime.images import store as store_images
from openvaala_server.runtime.images import with_images
from openvaala_server.runtime.item_factory import new_item
from openvaala_server.runtime.retrying import RetriesExhausted, with_retries
from openvaala_server.runtime.session import LiveSession, LiveTurn
from openvaala_server.runtime.turn_hooks import TurnHooks
from openvaala_server.tools.base import HeldChange, ToolContext, ToolResult, truncate_output

if TYPE_CHECKING:
    from openvaala_server.tools.base import Tool

log = logging.getLogger(__name__)


class TurnFailed(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass
class _Attempt:
    """What one model call has streamed so far (discarded whole if the call is retried)."""

    items: list[r.Item] = field(default_factory=list)
    text: r.Item | None = None
    reasoning: r.Item | None = None
    tool_calls: list[r.Item] = field(default_factory=list)


class TurnRunner:
    def __init__(self, conv: LiveConversation, session: LiveSession, turn: LiveTurn) -> None:
        self.conv = conv
        self.session = session
        self.turn = turn
        self.runtime = conv.runtime
        # What the turn started with: a config reload meanwhile applies from the next turn.
        self.config = turn.config or self.runtime.config
        self.sid = session.session_id
        # Inputs taken for this turn but not yet on disk: if saving them fails, they go back to
        # the waiting list instead of being lost.
        self._unsaved: list[Input] = []
        self._error: Exception | None = None  # what failed the turn, if anything did
        self._called = False  # a model call was made (a refresh is due only before the first)
        # Tool calls the model has begun and whose arguments are still streaming, by call id:
        # not shown yet (the complete call is), but recorded if the turn ends meanwhile.
        self._writing: dict[str, r.Item] = {}
        self.hooks = TurnHooks(conv, session, turn.turn_id, self.config)

    # -- the loop ------------------------------------------------------------------------

    async def run(self, inputs: list[Input]) -> None:
        status: TurnOutcome = "completed"
        error: r.ErrorInfo | None = None
        self.turn.started = True
        self.conv.renew_surroundings(self.session)  # a branch, an AGENTS.md changed meanwhile
        # An interrupt is this scope's cancellation (LiveSession.interrupt); `_finish` runs
        # outside it, so an interrupted turn is still written.
        with anyio.CancelScope() as interrupt:
            self.turn.interrupt_scope = interrupt
            if self.turn.stop_reason:  # interrupted before its first step
                interrupt.cancel()
            try:
                await self._steps(inputs)
            except TurnFailed as exc:
                status, error = "failed", {"kind": exc.kind, "message": exc.message}
                self._error = exc
            except errors.OpenVaalaError as exc:
                status, error = "failed", {"kind": exc.kind, "message": exc.message}
                self._error = exc
            except Exception:  # a bug must end the turn cleanly, never wedge the session
                log.exception("turn %s crashed", self.turn.turn_id)
                status = "failed"
                error = {"kind": "internal", "message": "the turn stopped on an internal error"}
                self._error = errors.OpenVaalaError(error["message"])
        self.turn.interrupt_scope = None
        if interrupt.cancelled_caught:
            status, error = "interrupted", None
        try:
            await self._finish(status, error)
        finally:
            self.turn.announced.set()  # a turn that never got to announce itself is over

    async def _steps(self, inputs: list[Input]) -> None:
        self._unsaved = list(inputs)
        await self.conv.append_meta(
            {"type": r.TURN_STARTED, "sessionId": self.sid, "turnId": self.turn.turn_id}
        )
        self.conv.checkpoints.turn_started(self.session, self.turn.turn_id)
        # turn/resume: no new message, a notice tells the model what happened.
        first = self._input_items(inputs) if inputs else [_resume_notice(self)]
        # Durable before anything is told (docs/storage.md): a turn whose message cannot be
        # saved is announced to no one, and the `input/send` that started it fails.
        await self.conv.save_items(self.session, first)
        self._unsaved = []
        self.turn.saved = True
        self._announce()
        self.conv.publish_items(self.session, first)
        # Only now may `input/send` answer: its message is durable (docs/protocol.md).
        self.turn.announced.set()
        if inputs:
            await self._prompt_submitted(inputs)
        while True:
            if self.turn.stop_reason:  # interrupted between two steps
                await self._interrupted()
            steering = self.session.inbox.take_steering()
            if steering:
                self.conv.publish_inbox(self.session)
                self._unsaved = steering
                await self._add_inputs(steering)
                self._unsaved = []
            tool_calls = await self._call_model()
            if not tool_calls:
                return
            for call in tool_calls:
                await self._run_tool(call)
            # After every result of the step: never between a call and its result.
            await self.conv.persist_items(self.session, self.hooks.take())

    async def _interrupted(self) -> None:
        assert self.turn.interrupt_scope is not None
        self.turn.interrupt_scope.cancel()
        await anyio.lowlevel.checkpoint()  # where the cancellation is delivered

    def _announce(self) -> None:
        # Once the turn's record and its inputs are durable (`_steps`): a client told of the
        # turn finds its message in the history.
        self.conv.hub.publish(
            methods.TURN_STARTED, {"sessionId": self.sid, "turnId": self.turn.turn_id}
        )
        self.conv.publish_session(self.session)
        if self.session.session_id == self.conv.root_session_id:
            self.conv.publish_updated()

    async def _finish(self, status: TurnOutcome, error: r.ErrorInfo | None) -> None:
        # Whatever was still streaming is kept, marked with how the turn ended.
        turn_id, hub = self.turn.turn_id, self.conv.hub
        item_status = r.INTERRUPTED if status == "interrupted" else r.FAILED
        finals = turn_end.settle(self.turn, hub, self.sid, self._writing, item_status)
        if status != "completed":
            finals += turn_end.not_run(self.session.items, finals, self.sid, turn_id, item_status)
        # A turn an `input/send` started, whose message could not be saved, never was for anyone
        # but that request: it fails with the reason, and the message is the client's again.
        refused = self.turn.by_request and not self.turn.saved and status == "failed"
        if status == "failed" and error and not refused:
            finals.append(turn_end.failure_notice(self.sid, turn_id, error))
        by_shutdown = self.turn.stop_reason == "shutdown"
        if not by_shutdown:
            with anyio.CancelScope(shield=True):  # bounded by each hook's timeout_s
                await self.hooks.turn_end(status)
        finals += self.hooks.take()
        if status == "interrupted" and not by_shutdown:
            finals.append(turn_end.interrupt_notice(self.sid, turn_id))
        status, error = await turn_end.save(self.conv, self.session, turn_id, finals, status, error)
        self.turn.status = end_turn(self.turn.status, status)
        await turn_end.record(self.conv, self.sid, turn_id, status, error)
        self.session.turn = None
        if refused:
            self.turn.refused = self._error or errors.OpenVaalaError("the message was not saved")
            self._unsaved = []
        else:
            self.session.last_status = last_status(status)
            turn_end.publish(hub, self.turn, self.sid, status, error)
        self.conv.publish_session(self.session)
        if self.session.session_id == self.conv.root_session_id:
            self.conv.publish_updated()
        if self._unsaved:
            self.runtime.return_inputs(self.conv, self.session, self._unsaved)
        self.runtime.on_turn_ended(self.conv, self.session, status, error)

    async def _add_inputs(self, inputs: list[Input]) -> None:
        await self.conv.persist_items(self.session, self._input_items(inputs))
        await self._prompt_submitted(inputs)

    async def _prompt_submitted(self, inputs: list[Input]) -> None:
        """The `prompt_submit` hooks, once the messages are durable; their output is kept."""
        await self.hooks.prompt_submit(inputs)
        await self.conv.persist_items(self.session, self.hooks.take())

    def _input_items(self, inputs: list[Input]) -> list[r.Item]:
        items = []
        for inp in inputs:
            fields: dict[str, object] = {
                "text": inp.text,
                "inputId": inp.input_id,
                "origin": inp.origin,
            }
            if inp.from_session_id:
                fields["fromSessionId"] = inp.from_session_id
            if inp.images:
                fields["images"] = inp.images
            items.append(
                new_item(r.USER_MESSAGE, self.sid, self.turn.turn_id, status=r.COMPLETED, **fields)
            )
        return items

    # -- model calls ---------------------------------------------------------------------

    def _request(self) -> ModelRequest:
        self.runtime.require_agent(self.session.agent, self.config)  # e.g. removed meanwhile
        model = self.runtime.model_config(self.session.model, self.config)
        return ModelRequest(
            model=model,
            instructions=self.conv.instructions_for(self.session),
            items=self.conv.model_context(self.session),
            tools=[t.spec for t in self.runtime.tools_for(self.conv, self.session).values()],
            # The provider assembles only what this session appended since its last call.
            owner=self.session,
        )

    async def _call_model(self) -> list[r.Item]:
        """One model call, retried on temporary errors. Returns the tool calls it asked for."""
        policy = RetryPolicy.from_config(self.config.retry)
        provider = self.runtime.provider(self.session.model, self.config)
        await self._compact_if_needed()
        # In the background: the call waits for none of them. Only the servers this session may
        # use: a subagent's are those every agent above it has too (docs/security.md, "Subagents").
        self.runtime.mcp.start(effective_tools(self.config, self.conv.sessions, self.session))
        await self.conv.load_surroundings(self.session)
        request = await with_images(self.conv, self._request())
        await warmup.catch_up(provider, request)
        compacted_for_overflow = False

        async def once() -> _Attempt:
            state = _Attempt()
            try:
                async for event in provider.stream(request):
                    self._on_event(state, event)
            except ModelError:
                self._discard(state)
                raise
            return state

        async def recover(exc: ModelError) -> bool:
            """After `context_overflow` the estimate was off: compact harder, once, and make
            the call again (not counted as an attempt)."""
            nonlocal compacted_for_overflow, request
            if exc.kind != "context_overflow":
                return False
            decision = decide(
                "overflow",
                early.context_state(self.conv, self.session),
                overflow_retried=compacted_for_overflow,
            )
            if decision.action == "compact":
                compacted_for_overflow = True
                summary = await compact(
                    self.conv,
                    self.session,
                    decision.reason,
                    turn_id=self.turn.turn_id,
                    keep_ratio=decision.keep_ratio,
                )
                if summary is not None:
                    request = await with_images(self.conv, self._request())
                    await warmup.catch_up(provider, request)
                    return True
            raise TurnFailed(
                "context_overflow",
                "The conversation no longer fits the model's context window, even after "
                f"compaction: {exc.message}",
            ) from None

        try:
            state = await with_retries(once, policy, self.conv.hub, self.sid, recover=recover)
        except RetriesExhausted as exc:
            raise TurnFailed(
                "provider_unavailable",
                f"The model provider kept failing after {exc.attempts} attempts: {exc.message}",
            ) from None
        except ModelError as exc:
            raise TurnFailed(exc.kind, exc.message) from None
        self._writing.clear()  # every call begun was completed (parsers end with them)
        for item in state.items:
            if item["type"] != r.TOOL_CALL:
                item["status"] = r.COMPLETED
        finals = turn_end.drop_empty(self.turn, self.conv.hub, self.sid, state.items)
        for call in state.tool_calls:
            call["status"] = r.COMPLETED
        # The provider's report already counts this call's output: no estimate on top.
        await self.conv.persist_items(self.session, finals, count_in_usage=False)
        return state.tool_calls

    async def _compact_if_needed(self) -> None:
        first_call = not self._called
        self._called = True
        await early.before_call(self.conv, self.session, self.turn.turn_id, first_call=first_call)

    def _start_item(self, state: _Attempt, item: r.Item) -> r.Item:
        state.items.append(item)
        self.turn.in_progress[item["itemId"]] = item
        self.conv.hub.publish(
            methods.ITEM_STARTED,
            {"sessionId": self.sid, "turnId": self.turn.turn_id, "item": item},
        )
        return item

    def _delta(self, item: r.Item, field_name: Literal["text", "output"], delta: str) -> None:
        if field_name == "text":
            item["text"] = item.get("text", "") + delta
        else:
            item["output"] = item.get("output", "") + delta
        self.conv.hub.publish(
            methods.ITEM_DELTA,
            {"sessionId": self.sid, "itemId": item["itemId"], "field": field_name, "delta": delta},
        )

    def _on_event(self, state: _Attempt, event: object) -> None:
        tid = self.turn.turn_id
        if isinstance(event, TextDelta):
            if state.text is None:
                state.text = self._start_item(
                    state, new_item(r.AGENT_MESSAGE, self.sid, tid, text="")
                )
            self._delta(state.text, "text", event.text)
        elif isinstance(event, ReasoningDelta):
            if state.reasoning is None:
                state.reasoning = self._start_item(
                    state, new_item(r.REASONING, self.sid, tid, text="")
                )
            self._delta(state.reasoning, "text", event.text)
        elif isinstance(event, ReasoningDone):
            item = state.reasoning or self._start_item(
                state, new_item(r.REASONING, self.sid, tid, text="")
            )
            if event.text and not item.get("text"):
                self._delta(item, "text", event.text)
            if event.provider_data:
                item["providerData"] = event.provider_data
            item["status"] = r.COMPLETED
            state.reasoning = None
        elif isinstance(event, ToolCallStarted):
            self._writing[event.call_id] = new_item(
                r.TOOL_CALL,
                self.sid,
                tid,
                callId=event.call_id,
                name=event.name,
                arguments={},
                argumentsText="",
            )
        elif isinstance(event, ToolCallRequested):
            self._writing.pop(event.call_id, None)
            fields: dict[str, object] = {
                "callId": event.call_id,
                "name": event.name,
                "arguments": event.arguments,
                "argumentsText": event.arguments_text,
            }
            if event.provider_data:
                fields["providerData"] = event.provider_data
            call = self._start_item(state, new_item(r.TOOL_CALL, self.sid, tid, **fields))
            state.tool_calls.append(call)
        elif isinstance(event, UsageReported):
            if event.reasoning_context:
                self.session.reasoning_context = event.reasoning_context
            self.session.usage.report(event.input_tokens, event.output_tokens, r.utc_now())
            self.conv.publish_usage(self.session)
        elif isinstance(event, StreamEnded):
            self.turn.model_stop = event.stop_reason

    def _discard(self, state: _Attempt) -> None:
        """Withdraw what a failed attempt streamed, so no client shows it twice."""
        self._writing.clear()
        for item in state.items:
            self.turn.in_progress.pop(item["itemId"], None)
            self.conv.hub.publish(
                methods.ITEM_DISCARDED, {"sessionId": self.sid, "itemId": item["itemId"]}
            )

    # -- tools ---------------------------------------------------------------------------

    async def _run_tool(self, call: r.Item) -> None:
        tools = self.runtime.tools_for(self.conv, self.session)
        tool: Tool | None = tools.get(call["name"])
        if tool is None:  # a server that was starting when asked
            # The chain's tools, not the agent's own list: a subagent never reaches a server
            # its parent lacks (docs/security.md, "Subagents").
            allowed = effective_tools(self.config, self.conv.sessions, self.session)
            tool = await self.runtime.mcp.tool_when_started(allowed, call["name"])
        limit = self.config.server.tool_output_limit
        confinement = self.runtime.confinement_for(self.conv, self.session)
        outcome: ToolResult | None = None
        if tool is None:
            outcome = ToolResult(
                f"Unknown tool {call['name']!r}. Available: {', '.join(tools)}", True
            )
        elif not isinstance(call.get("arguments"), dict):
            outcome = ToolResult("The tool arguments were not a JSON object.", True)
        else:
            # A refusing pre_tool hook decides before anyone is asked.
            outcome = await self.hooks.pre_tool(call)
        if outcome is None and tool is not None:
            try:
                outcome, confinement = await approve(
                    self.conv, self.session, call, tool, confinement
                )
            except asyncio.CancelledError:
                # Kept in the history with the interrupted turn: the model learns nothing ran.
                result = self._start_result(call)
                result["output"] = denials.INTERRUPTED_WAITING
                result["isError"] = True
                raise
        result = self._start_result(call)
        ran = outcome is None
        if outcome is None:
            assert tool is not None
            ctx = ToolContext(
                cwd=Path(self.conv.cwd),
                emit_output=lambda chunk: self._delta(result, "output", chunk),
                output_limit=limit,
                confinement=confinement,
                files=self.runtime.file_hosts.for_conversation(
                    self.conv.conversation_id, Path(self.conv.cwd)
                ),
                terminal=self.runtime.file_hosts.terminal_for(self.conv.conversation_id),
                call_id=str(call["callId"]),
            )
            held: tuple[HeldChange, ...] = ()  # changed in the editor, not on disk
            # Checkpoints (docs/storage.md): what the call changes can be restored later.
            capture = await self.conv.checkpoints.before_call(
                self.session, self.turn.turn_id, tool, call["arguments"]
            )
            try:
                outcome = await tool.run(call["arguments"], ctx)
                held = outcome.held
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.exception("tool %s crashed", call["name"])
                outcome = ToolResult(f"The tool failed: {type(exc).__name__}: {exc}", True)
            finally:
                if capture is not None:
                    # Runs when interrupted too: what the call changed stays restorable.
                    with anyio.CancelScope(shield=True):
                        await self.conv.checkpoints.after_call(capture, held)
        output, truncated = truncate_output(outcome.output, limit)
        result["output"] = output
        result["isError"] = outcome.is_error
        result["status"] = r.COMPLETED
        if truncated or outcome.truncated:
            result["truncated"] = True
        if outcome.changes:
            result["changes"] = list(outcome.changes)
        if outcome.attachments:  # on disk before the result that refers to them
            refs = await store_images(self.runtime, self.conv.conversation_id, outcome.attachments)
            result["images"] = refs
        await self.conv.persist_items(self.session, [result])
        if ran:
            await self.hooks.post_tool(call, result)

    def _start_result(self, call: r.Item) -> r.Item:
        tid = self.turn.turn_id
        result = new_item(
            r.TOOL_RESULT,
            self.sid,
            tid,
            callId=call["callId"],
            name=call["name"],
            output="",
            isError=False,
        )
        self.turn.in_progress[result["itemId"]] = result
        self.conv.hub.publish(
            methods.ITEM_STARTED, {"sessionId": self.sid, "turnId": tid, "item": result}
        )
        return result


def _resume_notice(runner: TurnRunner) -> r.Item:
    return new_item(
        r.NOTICE,
        runner.sid,
        runner.turn.turn_id,
        status=r.COMPLETED,
        kind=recovery.RESUMED,
        text=recovery.RESUME_NOTICE,
    )
