"""Inputs and the turns they start: sending, the waiting inputs clients edit, withdraw, steer
or jump by id, interrupting, and what starts when a turn ends (docs/design.md "Runtime split
by responsibility"). The order rules are the inbox's (domain/inbox.py); this module keeps only
which conversation and session a waiting input id belongs to."""

from __future__ import annotations

from collections import OrderedDict
from functools import partial
from typing import TYPE_CHECKING, Protocol

import anyio

from openvaala_server import errors
from openvaala_server.domain.ids import new_id
from openvaala_server.domain.inbox import Input, InputGone, Mode
from openvaala_server.runtime import early
from openvaala_server.runtime import images as runtime_images
from openvaala_server.runtime.conversation import LiveConversation
from openvaala_server.runtime.ports import Services
from openvaala_server.runtime.session import LiveSession, LiveTurn
from openvaala_server.runtime.turn import TurnRunner

if TYPE_CHECKING:
    from openvaala_server.domain import records as r
    from openvaala_server.domain.images import Image
    from openvaala_server.domain.status import StopReason
    from openvaala_server.protocol import payloads as p
    from openvaala_server.runtime.ports import Conversation
    from openvaala_server.runtime.subagents import SubagentService

# How many input ids are remembered, to tell an input that ended from one that never was.
INPUT_IDS_KEPT = 10_000


class Owner(Services, Protocol):
    """What inputs use of the conversation manager."""

    conversations: dict[str, LiveConversation]
    subagents: SubagentService

    async def open(self, cid: str) -> LiveConversation: ...


class Inputs:
    """The inputs of every loaded conversation, by id."""

    def __init__(self, runtime: Owner) -> None:
        self.runtime = runtime
        self._persist_locks: dict[str, anyio.Lock] = {}
        # Which conversation and session a waiting input belongs to, for input/* by id.
        self._waiting: dict[str, tuple[str, str]] = {}
        # The ids of the inputs this daemon took lately, waiting or not: an id not among them
        # was never an input here (`not_found`), one among them is `input_consumed`.
        self._taken: OrderedDict[str, None] = OrderedDict()

    async def persist_first(self, conv: LiveConversation, text: str) -> None:
        """Write a pending conversation to disk with its first message (`text` titles it)."""
        lock = self._persist_locks.setdefault(conv.conversation_id, anyio.Lock())
        async with lock:
            await conv.ensure_persisted(text)
        self._persist_locks.pop(conv.conversation_id, None)

    async def send(
        self,
        cid: str,
        sid: str | None,
        text: str,
        mode: Mode,
        origin: str = "user",
        from_session_id: str | None = None,
        *,
        images: list[Image] | None = None,
    ) -> p.SendResult:
        runtime = self.runtime
        conv = await runtime.open(cid)
        session = conv.session(sid)
        await conv.ensure_context()  # what the model call sends (docs/design.md)
        if runtime.shutting_down:
            raise errors.Busy("the server is shutting down")
        # A message from another session (a subagent's task, a report) comes from a turn that
        # checked the directory as it started: no thread hop here, so a spawn has registered
        # its child before the parent's next tool call of the same response (`wait`) runs.
        usable = conv.cwd_exists if from_session_id is not None else await conv.check_cwd()
        if not usable:
            raise errors.CwdMissing(
                f"the working directory {conv.cwd} no longer exists: recreate it, or point the "
                "conversation at another one with conversation/setCwd",
                cwd=conv.cwd,
            )
        runtime.require_agent(session.agent)
        runtime_images.require_vision(runtime.model_config(session.model), len(images or ()))
        if session.closed:
            raise errors.NotIdle("this subagent session was closed")
        if not conv.persisted:
            await self.persist_first(conv, text)
        refs = await runtime_images.store(runtime, cid, images or ())
        # From here on nothing awaits: the inbox and the turn change together.
        inp = Input(new_id(), text, mode, origin, from_session_id)  # type: ignore[arg-type]
        inp.images = refs
        self._taken[inp.input_id] = None
        while len(self._taken) > INPUT_IDS_KEPT:
            self._taken.popitem(last=False)
        busy = session.turn is not None or session.compacting
        disposition = session.inbox.add(inp, turn_running=busy)
        if disposition == "started":
            turn = self.start_turn(conv, session, [inp], by_request=True)
            # Answer once `turn/started` is out: a client reading "started" has then seen the
            # turn start, never an idle session that is in fact about to run. A message that
            # could not be saved fails the request instead (docs/protocol.md, input/send).
            await turn.announced.wait()
            if turn.refused is not None:
                raise turn.refused
        else:
            self._waiting[inp.input_id] = (cid, session.session_id)
            conv.publish_inbox(session)
            conv.publish_session(session)
            if disposition == "jumped":
                self.interrupt_session(conv, session, "jump")
        return {"inputId": inp.input_id, "disposition": disposition}

    def start_turn(
        self,
        conv: LiveConversation,
        session: LiveSession,
        inputs: list[Input],
        *,
        by_request: bool = False,
    ) -> LiveTurn:
        turn = LiveTurn(new_id(), config=self.runtime.config, by_request=by_request)
        session.turn = turn
        runner = TurnRunner(conv, session, turn)
        turn.task = self.runtime.tasks.spawn(partial(runner.run, inputs), f"turn-{turn.turn_id}")
        return turn

    def interrupt_session(
        self, conv: Conversation, session: LiveSession, reason: StopReason
    ) -> bool:
        if reason == "user":
            session.inbox.on_user_interrupt()
        if session.compaction_task is not None and not session.compaction_task.finished:
            session.compaction_task.cancel()
            return True
        turn = session.turn
        if turn is None or turn.task is None:
            return False
        if turn.stop_reason is None:
            turn.stop_reason = reason
            session.interrupt()
        return True

    def on_turn_ended(
        self,
        conv: Conversation,
        session: LiveSession,
        status: str,
        error: r.ErrorInfo | None,
    ) -> None:
        """Called by the loop as a turn ends (synchronously): start what waits next."""
        self.runtime.subagents.on_turn_ended(conv, session, status, error)
        if error and error.get("kind") == errors.StorageFailed.kind:
            # The disk refused a write: starting the next turn would fail the same way. What
            # waits stays waiting until the user acts (send, jump, steer).
            return
        # The loaded conversation itself (the loop names it by its interface): none once deleted.
        live = self.runtime.conversations.get(conv.conversation_id)
        if live is None:
            return
        self.start_waiting(live, session)
        early.maybe_prepare(live, session)
        live.residency.check()  # nobody may be watching (runtime/residency.py)

    def return_inputs(self, conv: Conversation, session: LiveSession, inputs: list[Input]) -> None:
        """Put inputs a turn could not save back at the front of the waiting list, as queued."""
        session.inbox.put_back(inputs)
        for inp in inputs:
            self._waiting[inp.input_id] = (conv.conversation_id, session.session_id)
        conv.publish_inbox(session)

    def start_waiting(self, conv: LiveConversation, session: LiveSession) -> None:
        """If input waits and the session is free, start the next turn with it."""
        if self.runtime.shutting_down or conv.conversation_id not in self.runtime.conversations:
            return
        if session.turn is not None or session.compacting:
            return
        nxt = session.inbox.next_turn()
        if nxt:
            for inp in nxt:
                self._waiting.pop(inp.input_id, None)
            conv.publish_inbox(session)
            self.start_turn(conv, session, nxt)

    def drop_waiting(self, session: LiveSession) -> None:
        """Forget every input waiting in `session` (it was closed): none will ever run."""
        for inp in session.inbox.drop_all():
            self._waiting.pop(inp.input_id, None)

    def forget(self, conv: LiveConversation) -> None:
        """Forget the ids of the inputs waiting in `conv` (it was deleted)."""
        self._waiting = {k: v for k, v in self._waiting.items() if v[0] != conv.conversation_id}

    def _owner(self, input_id: str) -> tuple[LiveConversation, LiveSession]:
        owner = self._waiting.get(input_id)
        conv = self.runtime.conversations.get(owner[0]) if owner else None
        if owner is None and input_id not in self._taken:
            raise errors.NotFound(f"no input {input_id} on this daemon", param="inputId")
        if owner is None or conv is None:
            raise errors.InputConsumed(
                f"input {input_id} is no longer waiting: it was already handled or withdrawn",
                inputId=input_id,
            )
        return conv, conv.sessions[owner[1]]

    def edit(self, input_id: str, text: str) -> None:
        conv, session = self._owner(input_id)
        try:
            session.inbox.edit(input_id, text)
        except InputGone:
            self._consumed(input_id)
        conv.publish_inbox(session)

    def withdraw(self, input_id: str) -> p.WithdrawResult:
        conv, session = self._owner(input_id)
        try:
            inp = session.inbox.withdraw(input_id)
        except InputGone:
            self._consumed(input_id)
        self._waiting.pop(input_id, None)
        conv.publish_inbox(session)
        conv.publish_session(session)
        result: p.WithdrawResult = {"text": inp.text}
        if inp.images:
            result["images"] = inp.images
        return result

    def steer(self, input_id: str) -> None:
        conv, session = self._owner(input_id)
        try:
            session.inbox.steer(input_id)
        except InputGone:
            self._consumed(input_id)
        conv.publish_inbox(session)
        self.start_waiting(conv, session)

    def jump(self, input_id: str) -> None:
        conv, session = self._owner(input_id)
        try:
            session.inbox.jump(input_id)
        except InputGone:
            self._consumed(input_id)
        conv.publish_inbox(session)
        if not self.interrupt_session(conv, session, "jump"):
            self.start_waiting(conv, session)

    def _consumed(self, input_id: str) -> None:
        self._waiting.pop(input_id, None)
        raise errors.InputConsumed(
            f"input {input_id} is no longer waiting: it was already handled or withdrawn",
            inputId=input_id,
        )
