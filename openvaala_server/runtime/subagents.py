"""Subagents: sessions an agent starts with `spawn_agent`, and the tools to work with them.

The runtime calls two hooks: `tools_for` (the collaboration tools a session may use) and
`on_turn_ended` (a subagent reports back to its parent after each of its turns).

A subagent is a new session of the same conversation (its own `<session-id>.jsonl`, a
`session_created` record naming its parent), sharing the conversation's working directory and
executors. Its first turn starts from the task, optionally after a copy of some of the parent's
*finished* history. Every time one of its turns ends, its answer and status go to the parent's
inbox as a `subagent` input (mode steer: it joins the parent's running turn, or starts one; user
input always goes first, and after the user interrupts the parent the report waits).

Messages a parent sends to its subagents (the task, `send_message`) are the subagent's "user"
input: `origin: "user"` with `fromSessionId` naming the parent.

Every operation has a deadline, so a stuck child never hangs its parent: `wait` is always
bounded by `[subagents] wait_timeout_s`, and the other operations by `OPERATION_DEADLINE_S`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, cast

import anyio

from openvaala_server import errors
from openvaala_server.domain import records as r
from openvaala_server.domain.approvals import NoGrant
from openvaala_server.domain.context import context_items, valid_boundaries
from openvaala_server.domain.ids import new_id
from openvaala_server.domain.inheritance import wider
from openvaala_server.domain.title import auto_title
from openvaala_server.protocol import methods
from openvaala_server.runtime.agent_chain import effective_tools, own_permissions, own_tools
from openvaala_server.runtime.approvals import ask_user
from openvaala_server.runtime.ports import Models, Rules, Turns
from openvaala_server.runtime.subagent_reports import (
    ANSWER_LIMIT,
    brief,
    cut,
    last_answer,
    report_text,
)
from openvaala_server.structured import Activity
from openvaala_server.tools.collab import (
    COLLAB_TOOL_NAMES,
    SPAWN_TOOL,
    AgentState,
    Closed,
    Delivered,
    History,
    Inspection,
    Interrupted,
    Spawned,
    SubagentError,
    WaitResult,
    collab_tools,
)

if TYPE_CHECKING:
    from openvaala_server.config import AgentConfig, SubagentConfig
    from openvaala_server.runtime.approvals import ApprovalHost
    from openvaala_server.runtime.ports import Conversation
    from openvaala_server.runtime.session import LiveSession
    from openvaala_server.tools.base import Tool

log = logging.getLogger(__name__)

# The longest any subagent operation other than `wait` may take (writes, interrupts, closes).
OPERATION_DEADLINE_S = 30.0
# How long interrupt_agent / close_agent wait for the subagent's turn to wind down.
STOP_DEADLINE_S = 10.0


class Runtime(Models, Rules, Turns, Protocol):
    """What subagents use of the conversation manager."""


class SubagentService:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        # Set (and replaced) whenever a subagent's turn ends or it is closed: wakes `wait`.
        self._changed: anyio.Event | None = None
        # Spawns between their checks and their first turn, per conversation (concurrency limit).
        self._spawning: dict[str, int] = {}

    @property
    def limits(self) -> SubagentConfig:
        return self.runtime.config.subagents

    @property
    def agents(self) -> Mapping[str, AgentConfig]:
        return self.runtime.config.agents

    # -- hooks the runtime calls ---------------------------------------------------------

    def tools_for(self, conv: Conversation, session: LiveSession) -> dict[str, Tool]:
        """The collaboration tools, for agents whose `tools` include `spawn_agent`."""
        # The agent's own list: the runtime keeps of these only what the chain above gives
        # (runtime/manager.tools_for, docs/security.md "Subagents").
        agent = self.runtime.config.agents.get(session.agent)
        names = agent.tools if agent else ()
        if SPAWN_TOOL not in names and not any(n in COLLAB_TOOL_NAMES for n in names):
            return {}
        tools = collab_tools(_Caller(self, conv, session))
        if SPAWN_TOOL in names:
            return tools
        return {name: tool for name, tool in tools.items() if name in names}

    def on_turn_ended(
        self,
        conv: Conversation,
        session: LiveSession,
        status: str,
        error: r.ErrorInfo | None,
    ) -> None:
        """Called synchronously as any session's turn ends: a subagent reports to its parent."""
        self._notify()
        parent_id = session.parent_session_id
        if parent_id is None or session.closed or self.runtime.shutting_down:
            return
        if status not in ("completed", "failed", "interrupted"):
            return  # the runtime kicking an idle session's inbox: no turn ended
        parent = conv.sessions.get(parent_id)
        if parent is None or parent.closed:
            return
        text = report_text(session, status, error, last_answer(session))
        # An activity of the runtime: it outlives the child's turn, never the daemon.
        report = partial(self._report, conv, parent_id, session.session_id, text)
        self.runtime.tasks.spawn(report, f"report-{session.session_id}")

    async def _report(self, conv: Conversation, parent_id: str, child_id: str, text: str) -> None:
        try:
            async with asyncio.timeout(OPERATION_DEADLINE_S):
                await self.runtime.send_input(
                    conv.conversation_id,
                    parent_id,
                    text,
                    "steer",
                    origin="subagent",
                    from_session_id=child_id,
                )
        except errors.OpenVaalaError as exc:
            log.info("report of %s to %s dropped: %s", child_id, parent_id, exc.message)
        except TimeoutError:
            log.warning("report of %s to %s timed out", child_id, parent_id)
        except Exception:
            log.exception("report of %s to %s failed", child_id, parent_id)

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def _change_event(self) -> anyio.Event:
        if self._changed is None:
            self._changed = anyio.Event()
        return self._changed

    # -- the tree ------------------------------------------------------------------------

    def children(self, conv: Conversation, session_id: str) -> list[LiveSession]:
        return [s for s in conv.sessions.values() if s.parent_session_id == session_id]

    def descendants(self, conv: Conversation, session_id: str) -> list[LiveSession]:
        """Every session below `session_id`, parents before their children."""
        found: list[LiveSession] = []
        frontier = [session_id]
        while frontier:
            below = [c for sid in frontier for c in self.children(conv, sid)]
            found += below
            frontier = [c.session_id for c in below]
        return found

    def resolve(self, conv: Conversation, caller: LiveSession, agent_id: str) -> LiveSession:
        """A subagent the caller may address: one of its own, at any depth below it."""
        for session in self.descendants(conv, caller.session_id):
            if session.session_id == agent_id:
                return session
        raise SubagentError(
            f"No subagent {agent_id!r} of yours in this conversation; "
            "list_agents shows the ones you started."
        )

    def describe(self, session: LiveSession) -> AgentState:
        described: AgentState = {
            "agent_id": session.session_id,
            "parent_id": session.parent_session_id,
            "agent": session.agent,
            "model": session.model,
            "title": session.title,
            "status": session.status,
            "depth": session.depth,
        }
        answer = last_answer(session)
        if answer is not None:
            described["last_answer"] = cut(answer, ANSWER_LIMIT)
        return described

    # -- operations (the collaboration tools call these) ---------------------------------

    def child_model(self, parent: LiveSession, agent_name: str) -> str:
        """The agent's own model when its configuration names one, else the parent's."""
        agent = self.runtime.config.agents[agent_name]
        if agent.model_set:
            return agent.model
        return parent.model

    async def spawn(
        self,
        conv: Conversation,
        parent: LiveSession,
        agent_name: str,
        task: str,
        history: History = "none",
    ) -> LiveSession:
        config = self.runtime.config
        if agent_name not in config.agents:
            raise SubagentError(
                f"No agent {agent_name!r}. Configured agents: {', '.join(config.agents)}."
            )
        if not task.strip():
            raise SubagentError("The task is empty: say what the subagent should do.")
        depth = parent.depth + 1
        if depth > self.limits.max_depth:
            raise SubagentError(
                f"Cannot start a subagent here: subagents may nest at most "
                f"{self.limits.max_depth} level(s) deep (this one would be at depth {depth}). "
                "Do the work yourself instead."
            )
        cid = conv.conversation_id
        running = sum(
            1
            for s in conv.sessions.values()
            if s.parent_session_id is not None and s.turn is not None
        ) + self._spawning.get(cid, 0)
        if running >= self.limits.max_concurrent:
            raise SubagentError(
                f"Cannot start another subagent: {running} are already running in this "
                f"conversation (the limit is {self.limits.max_concurrent}). Wait for one to "
                "finish, or close one, then try again."
            )
        model = self.child_model(parent, agent_name)
        if model not in config.models:
            raise SubagentError(f"The agent {agent_name!r} uses model {model!r}, not configured.")
        copies = self._history_copy(parent, history)
        self._spawning[cid] = self._spawning.get(cid, 0) + 1
        try:
            await self._within_parent(conv, parent, agent_name, task)
            async with asyncio.timeout(OPERATION_DEADLINE_S):
                return await self._create(conv, parent, agent_name, model, task, depth, copies)
        except TimeoutError:
            raise SubagentError("Starting the subagent timed out.") from None
        except errors.OpenVaalaError as exc:
            raise SubagentError(f"The subagent could not start: {exc.message}") from None
        finally:
            left = self._spawning[cid] - 1
            if left:
                self._spawning[cid] = left
            else:
                del self._spawning[cid]

    async def _within_parent(
        self, conv: Conversation, parent: LiveSession, agent_name: str, task: str
    ) -> None:
        """A child configured with more than its parent has runs narrowed to the parent's
        limits anyway; starting one is refused when nobody may be asked (the parent's approval
        is "never"), else the user is asked, with the reason (docs/security.md, "Subagents")."""
        # The parent's own, not narrowed by the conversation's permission mode: the mode narrows
        # the child just as much (docs/security.md, "Permission modes"), and plan mode's
        # read-only "never" would refuse every child configured like the parent.
        parent_perms = self.runtime.own_permissions_for(conv, parent)
        config = self.runtime.config
        more = wider(
            own_permissions(config, agent_name),
            parent_perms,
            own_tools(config, agent_name),
            effective_tools(config, conv.sessions, parent),
        )
        if not more:
            return
        what = "; ".join(more)
        if "never" in parent_perms.approvals:
            raise SubagentError(
                f"Refused: the agent {agent_name!r} is configured with more than you may do "
                f'({what}), and your approval setting is "never", so nobody can allow it. '
                "Start an agent configured within your limits, or do the work yourself."
            )
        reason = (
            f"{parent.agent!r} wants to start the agent {agent_name!r}, which is configured "
            f"with more than {parent.agent!r} may do: {what}. If you allow it, it still runs "
            f"within {parent.agent!r}'s limits, and asks you before going beyond them."
        )
        summary = f"start agent {agent_name}"
        arguments: dict[str, Any] = {"agent": agent_name, "task": task}
        once = NoGrant("starting an agent wider than its parent is asked each time")
        host = cast("ApprovalHost", conv)
        response = await ask_user(host, parent, SPAWN_TOOL, summary, arguments, reason, once)
        if response.decision == "deny":
            text = f"The user did not allow starting the agent {agent_name!r}."
            if response.message:
                text += f" Their message: {response.message}"
            raise SubagentError(text)

    async def _create(
        self,
        conv: Conversation,
        parent: LiveSession,
        agent_name: str,
        model: str,
        task: str,
        depth: int,
        copies: list[r.Item],
    ) -> LiveSession:
        sid = new_id()
        title = auto_title(task)
        await conv.append_meta(
            {
                "type": r.SESSION_CREATED,
                "sessionId": sid,
                "parentSessionId": parent.session_id,
                "agent": agent_name,
                "model": model,
                "title": title,
            }
        )
        child = conv.make_session(sid, parent.session_id, agent_name, model, title, depth)
        conv.refresh_usage_estimate(child)
        conv.hub.publish(methods.SESSION_STARTED, {"session": child.to_wire()})
        for item in copies:
            item["sessionId"] = sid
        await conv.persist_items(child, copies)
        await self.runtime.send_input(
            conv.conversation_id,
            sid,
            task,
            "queue",
            origin="user",
            from_session_id=parent.session_id,
        )
        return child

    def _history_copy(self, parent: LiveSession, history: History) -> list[r.Item]:
        """Copies of the parent's finished items (never its running turn's) for a new child."""
        if history == "none" or history == 0:
            return []
        running = parent.turn.turn_id if parent.turn is not None else None
        # What the parent's model sees (its latest summary and what follows), finished turns only.
        finished = [
            i
            for i in context_items(parent.items)
            if (running is None or i.get("turnId") != running) and i.get("type") != r.REASONING
        ]
        if isinstance(history, int) and history < len(finished):
            # Whole steps only: never a tool result whose call was left behind.
            cuts = [b for b in valid_boundaries(finished) if b >= len(finished) - history]
            finished = finished[cuts[0] :] if cuts else []
        copies = []
        for item in finished:
            copy = item.copy()
            copy["itemId"] = new_id()
            copy["copiedFrom"] = {"sessionId": parent.session_id, "itemId": item["itemId"]}
            copy["turnId"] = None
            copy.pop("coversUpTo", None)  # a copied summary stands for everything before it
            copy.pop("inputId", None)
            copy.pop("providerData", None)
            copies.append(copy)
        return copies

    async def send_message(
        self, conv: Conversation, caller: LiveSession, agent_id: str, text: str, interrupt: bool
    ) -> Delivered:
        target = self.resolve(conv, caller, agent_id)
        if target.closed:
            raise SubagentError(f"The subagent {agent_id} was closed; start a new one instead.")
        if not text.strip():
            raise SubagentError("The message is empty.")
        try:
            async with asyncio.timeout(OPERATION_DEADLINE_S):
                result = await self.runtime.send_input(
                    conv.conversation_id,
                    target.session_id,
                    text,
                    "jump" if interrupt else "steer",
                    origin="user",
                    from_session_id=caller.session_id,
                )
        except errors.OpenVaalaError as exc:
            raise SubagentError(f"The message could not be delivered: {exc.message}") from None
        except TimeoutError:
            raise SubagentError("Delivering the message timed out.") from None
        return {"agent_id": target.session_id, "disposition": result["disposition"]}

    async def wait(
        self,
        conv: Conversation,
        caller: LiveSession,
        agent_ids: list[str] | None,
        timeout_s: float | None,
        until: str = "all",
    ) -> WaitResult:
        """Until the subagents are not running (any or all of them), or the timeout passes.

        The timeout is always enforced and never longer than `[subagents] wait_timeout_s`.
        Without `agent_ids`, waits for the caller's direct subagents that are running now."""
        if agent_ids:
            targets = [self.resolve(conv, caller, a) for a in dict.fromkeys(agent_ids)]
        else:
            targets = [s for s in self.children(conv, caller.session_id) if s.turn is not None]
        cap = self.limits.wait_timeout_s
        timeout = cap if timeout_s is None else max(0.0, min(float(timeout_s), cap))
        loop = asyncio.get_running_loop()
        start = loop.time()
        deadline = start + timeout
        timed_out = False

        def done() -> bool:
            finished = [s.turn is None for s in targets]
            return any(finished) if until == "any" else all(finished)

        while targets and not done():
            left = deadline - loop.time()
            if left <= 0:
                timed_out = True
                break
            event = self._change_event()
            try:
                async with asyncio.timeout(left):
                    await event.wait()
            except TimeoutError:
                pass
        return WaitResult(
            timed_out=timed_out,
            waited_s=round(loop.time() - start, 3),
            agents=[self.describe(s) for s in targets],
        )

    async def interrupt(
        self, conv: Conversation, caller: LiveSession, agent_id: str
    ) -> Interrupted:
        target = self.resolve(conv, caller, agent_id)
        task = target.turn.task if target.turn is not None else None
        # Like a user interrupt for the subagent: its own subagents' reports wait until its
        # parent (its user) sends it something.
        interrupted = self.runtime.interrupt_session(conv, target, "user")
        if task is not None and interrupted:
            with anyio.move_on_after(STOP_DEADLINE_S):
                await task.wait()
        return {**self.describe(target), "interrupted": interrupted}

    async def close(self, conv: Conversation, caller: LiveSession, agent_id: str) -> list[Closed]:
        """Close a subagent and everything below it: running turns stop, nothing reports."""
        target = self.resolve(conv, caller, agent_id)
        subtree = [target, *self.descendants(conv, target.session_id)]
        open_ones = [s for s in subtree if not s.closed]
        if open_ones:
            try:
                closed: list[r.SessionClosed] = [
                    {"type": r.SESSION_CLOSED, "sessionId": s.session_id} for s in open_ones
                ]
                async with asyncio.timeout(OPERATION_DEADLINE_S):
                    await conv.append_meta(*closed)
            except TimeoutError:
                raise SubagentError("Closing the subagent timed out.") from None
        tasks: list[Activity] = []
        for session in open_ones:
            session.closed = True
            had_inputs = bool(session.inbox.waiting)
            self.runtime.drop_waiting_inputs(session)
            if had_inputs:
                conv.publish_inbox(session)
            if session.turn is not None and session.turn.task is not None:
                tasks.append(session.turn.task)
                self.runtime.interrupt_session(conv, session, "close")
            conv.publish_session(session)
        self._notify()
        with anyio.move_on_after(STOP_DEADLINE_S):
            for task in tasks:
                await task.wait()
        return [{"agent_id": s.session_id, "status": s.status} for s in subtree]

    def inspect(
        self, conv: Conversation, caller: LiveSession, agent_id: str, limit: int
    ) -> Inspection:
        target = self.resolve(conv, caller, agent_id)
        items = list(target.items)
        if target.turn is not None:
            items += list(target.turn.in_progress.values())
        return {
            **self.describe(target),
            "recent_items": [brief(i) for i in items[-limit:]] if limit else [],
            # Those let go of memory too (runtime/residency.py).
            "item_count": target.held_from + len(items),
            "usage": target.usage.to_wire(),
            "waiting_inputs": len(target.inbox.waiting),
            "subagents": [c.session_id for c in self.children(conv, target.session_id)],
        }

    def list(self, conv: Conversation, caller: LiveSession) -> list[AgentState]:
        listed = []
        for session in self.descendants(conv, caller.session_id):
            described = self.describe(session)
            described.pop("last_answer", None)
            listed.append(described)
        return listed


# -- helpers ---------------------------------------------------------------------------------


class _Caller:
    """The service as one session's collaboration tools see it (`tools.collab.Subagents`):
    bound to the conversation and the calling session, which the tools never see."""

    def __init__(self, service: SubagentService, conv: Conversation, caller: LiveSession) -> None:
        self._service = service
        self._conv = conv
        self._caller = caller

    @property
    def limits(self) -> SubagentConfig:
        return self._service.limits

    @property
    def agents(self) -> Mapping[str, AgentConfig]:
        return self._service.agents

    async def spawn(self, agent_name: str, task: str, history: History = "none") -> Spawned:
        child = await self._service.spawn(self._conv, self._caller, agent_name, task, history)
        return {
            "agent_id": child.session_id,
            "agent": child.agent,
            "model": child.model,
            "status": child.status,
        }

    async def send_message(self, agent_id: str, text: str, interrupt: bool) -> Delivered:
        return await self._service.send_message(self._conv, self._caller, agent_id, text, interrupt)

    async def wait(
        self, agent_ids: list[str] | None, timeout_s: float | None, until: str = "all"
    ) -> WaitResult:
        return await self._service.wait(self._conv, self._caller, agent_ids, timeout_s, until)

    async def interrupt(self, agent_id: str) -> Interrupted:
        return await self._service.interrupt(self._conv, self._caller, agent_id)

    async def close(self, agent_id: str) -> list[Closed]:
        return await self._service.close(self._conv, self._caller, agent_id)

    def inspect(self, agent_id: str, limit: int) -> Inspection:
        return self._service.inspect(self._conv, self._caller, agent_id, limit)

    def list(self) -> list[AgentState]:
        return self._service.list(self._conv, self._caller)
