"""One ACP session's view of its conversation: daemon notifications in, `session/update`s out.

Pure (no I/O, no event loop): `SessionStream.on_note` takes one notification and returns the
updates to send, in order; `SessionStream.replay` turns saved items into the updates that redraw
them (`session/load`). Only the root session's items are shown: a subagent's work reaches the
editor as its parent's `spawn_agent` call and report, as in the other clients.

The stream is folded by the one fold every client shares (`ConversationView`,
openvaala_server/client/view.py): it decides which session a notification belongs to, drops
what the snapshot already held (`seq`), and keeps the items whole; this module only says how
each change of the root session looks in ACP (docs/design.md, "One fold under ACP").

What maps to what (docs/editors.md):
- `agent_message` text → `agent_message_chunk`; `reasoning` → `agent_thought_chunk`;
- `tool_call` → `tool_call` (kind, title, locations, proposed diff, raw input); its streamed
  output and its `tool_result` → `tool_call_update` (content, status, raw output);
- a `user_message` sent by another client → `user_message_chunk` (this editor's own are not
  echoed back);
- `notice` items (a failed turn, a crash) → an agent message in italics;
- `usage/updated` → `usage_update`; a title change → `session_info_update`; the plan →
  `plan`; the root's agent → `current_mode_update`; its model and the conversation's permission
  mode → `config_option_update`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import cast

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    PlanEntry,
    PlanEntryStatus,
    SessionInfoUpdate,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    UsageUpdate,
    UserMessageChunk,
)

from openvaala_acp import tools
from openvaala_server.client.connection import SNAPSHOT
from openvaala_server.client.cut_stream import keep_cut_stream
from openvaala_server.client.view import Change, ConversationView, ItemDelta, Params
from openvaala_server.domain.records import Item
from openvaala_server.protocol import methods
from openvaala_server.protocol.json_types import JsonObject

Update = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
)
PLAN_METHOD = methods.PLAN_UPDATED
# Ends a reply a daemon crash cut short: ACP has no status for a message (docs/editors.md).
INTERRUPTED_MARK = "\n\n_(interrupted)_\n"


STREAMED_OUTPUT_LIMIT = 16_000  # characters of a running tool's output resent with each delta


def _tail(output: str) -> str:
    # Each delta resends the output so far (ACP replaces a call's content): a long-running
    # command shows its last lines while it runs, and the whole output once it finishes.
    if len(output) <= STREAMED_OUTPUT_LIMIT:
        return output
    return "…\n" + output[-STREAMED_OUTPUT_LIMIT:].split("\n", 1)[-1]


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def usage_update(usage: Mapping[str, object]) -> UsageUpdate | None:
    used, size = usage.get("used"), usage.get("contextWindow")
    if not isinstance(used, int) or not isinstance(size, int):
        return None
    return UsageUpdate(session_update="usage_update", used=max(used, 0), size=max(size, 0))


def _error_message(params: Params, default: str) -> str:
    error = params.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    return str(message) if message is not None else default


def _status_note(method: str, params: Params) -> str | None:
    """What the daemon is doing between model calls, which ACP has no update for: shown as a
    line of the agent's thoughts (a retry after a provider error, a compaction)."""
    if method == methods.RETRY_SCHEDULED:
        return (
            f"\n(The model call failed: {_error_message(params, 'error')}. Retrying in"
            f" {params.get('delaySeconds')} s, attempt {params.get('attempt')} of"
            f" {params.get('maxAttempts')}.)\n"
        )
    if method == methods.COMPACTION_STARTED:
        return "\n(Compacting the conversation: summarizing the history to free context…)\n"
    if method == methods.COMPACTION_FAILED:
        return f"\n({_error_message(params, 'compaction failed')})\n"
    return None


def plan_update(plan: Mapping[str, object]) -> AgentPlanUpdate:
    """The daemon's Plan (`{explanation?, steps: [{step, status}]}`, docs/protocol.md "Plan") as
    ACP's: the whole list each time, which the editor replaces."""
    steps = plan.get("steps")
    return AgentPlanUpdate(
        session_update="plan",
        entries=[
            PlanEntry(
                content=str(step.get("step") or ""),
                priority="medium",  # the daemon's plan has no priorities
                status=_STEP_STATUS.get(str(step.get("status")), "pending"),
            )
            for step in (steps if isinstance(steps, list) else [])
            if isinstance(step, dict)
        ],
    )


_STEP_STATUS: dict[str, PlanEntryStatus] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "completed": "completed",
}


@dataclass(frozen=True)
class Call:
    """A tool call the editor was shown: what an approval and the call's result are matched to."""

    name: str
    arguments: JsonObject
    turn_id: str | None


@dataclass
class SessionStream:
    conversation_id: str
    root_session_id: str
    cwd: str
    title: str = ""
    agent: str = ""
    model: str = ""
    # The permission mode in force and those the agent allows (the conversation's info).
    permission_mode: str = ""
    permission_modes: list[str] = field(default_factory=list)
    # Builds the config options' current state (the agent module knows the model list).
    config_options: Callable[[SessionStream], ConfigOptionUpdate | None] = lambda _stream: None
    # Texts this editor sent that the daemon has not echoed yet: their `user_message` is skipped.
    own_texts: list[str] = field(default_factory=list)
    # Items seen starting or streaming, by id: their type and whether text already went out.
    _types: dict[str, str] = field(default_factory=dict)
    _streamed: set[str] = field(default_factory=set)
    # Tool calls by callId (name, arguments) and the output streamed so far per result item.
    calls: dict[str, Call] = field(default_factory=dict)
    _outputs: dict[str, str] = field(default_factory=dict)
    _result_call: dict[str, str] = field(default_factory=dict)  # tool_result itemId -> callId
    _finished: set[str] = field(default_factory=set)  # callIds with a result
    # callIds shown as the editor's own terminal (editor_files.py): the editor shows their
    # output live itself, and a text update would replace the terminal in the call.
    terminal_calls: set[str] = field(default_factory=set)
    # The conversation as the shared fold keeps it (None: only the root session is known yet).
    view: ConversationView | None = None

    def __post_init__(self) -> None:
        if self.view is None:
            self.load({"conversation": {"conversationId": self.conversation_id}}, 0)

    def load(self, snapshot: Params, seq: int) -> None:
        """Start the fold from a snapshot (`conversation/subscribe`, or after a reconnection)."""
        conversation = snapshot.get("conversation")
        info = {
            "rootSessionId": self.root_session_id,
            **(conversation if isinstance(conversation, dict) else {}),
        }
        sessions = snapshot.get("sessions") or [{"sessionId": self.root_session_id}]
        self.view = ConversationView.from_snapshot(
            {**snapshot, "conversation": info, "sessions": sessions}, seq, local_notices=False
        )

    # -- notifications -------------------------------------------------------------------

    def on_note(self, method: str, params: Params) -> list[Update]:
        assert self.view is not None
        if method == SNAPSHOT:
            return self._reloaded(params)
        changes = self.view.fold(method, params)
        if method == methods.CONVERSATION_UPDATED and changes:
            return self._conversation(self.view.conversation)
        mine = [c for c in changes if c.session_id == self.root_session_id]
        root = self.view.sessions.get(self.root_session_id)
        if not mine or root is None:  # another session's, or already seen
            return []
        if method == methods.ITEM_STARTED:
            return self._started(_changed_item(mine, params))
        if method == methods.ITEM_DELTA:
            return [u for c in mine if isinstance(c, ItemDelta) for u in self._delta(c)]
        if method == methods.ITEM_COMPLETED:
            return self._completed(_changed_item(mine, params))
        if method == methods.USAGE_UPDATED:
            update = usage_update(root.usage)
            return [update] if update else []
        if method == methods.SESSION_UPDATED:
            return self._session(root.info)
        if method == PLAN_METHOD:
            return [plan_update(root.plan or {})]
        if method == methods.ITEM_DISCARDED:
            item_id = str(params.get("itemId"))
            self._types.pop(item_id, None)
            self._streamed.discard(item_id)
            self._outputs.pop(item_id, None)
            return []
        if method == methods.TURN_ENDED:
            return self.settle()
        if (note := _status_note(method, params)) is not None:
            return [AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(note))]
        return []

    def _reloaded(self, params: Params) -> list[Update]:
        """A snapshot after a reconnection (maybe of a restarted daemon). The editor keeps what
        it was shown (ACP cannot take a message back), so only the difference goes out: a reply
        a crash cut short, which the fold keeps (openvaala_server/client/cut_stream.py), is
        marked interrupted where it ends; the root's items the editor never saw (the notice of
        the crash, what completed while it was away) are shown; calls left without a result
        are settled; and the settings that changed meanwhile are announced (docs/editors.md,
        "Errors and restarts")."""
        assert self.view is not None
        root = self.view.sessions.get(self.root_session_id)
        seen = {str(i.get("itemId")) for i in root.items} if root else set()
        kept_before = set(self.view.kept_cut)
        self.view.fold(SNAPSHOT, params)
        root = self.view.sessions.get(self.root_session_id)
        updates: list[Update] = []
        for item in root.items if root else []:
            item_id = str(item.get("itemId"))
            if item_id in self.view.kept_cut - kept_before:
                updates.append(self._chunk(str(item.get("type")), INTERRUPTED_MARK, item_id))
            elif item_id not in seen:
                updates += self._fresh(item)
        turn = root.turn_id if root else None
        # What another client switched while this agent was away (the title, the permission
        # mode; the root's agent and model) redraws the editor's selectors now, not at the
        # next switch: only differences go out.
        settings = self._conversation(self.view.conversation)
        settings += self._session(root.info) if root else []
        return updates + self.settle(turn) + settings

    def _fresh(self, item: Item) -> list[Update]:
        """An item first seen in a snapshot: a running one as it starts (its deltas follow),
        another as it was saved; a message this editor sent is not echoed back."""
        if item.get("status") == "in_progress":
            return self._started(item)
        if item.get("type") == "user_message" and str(item.get("text") or "") in self.own_texts:
            self.own_texts.remove(str(item.get("text") or ""))
            return []
        return self.replay([item])

    def _conversation(self, info: JsonObject) -> list[Update]:
        return self._title(info) + self._permission_mode(info)

    def _title(self, info: JsonObject) -> list[Update]:
        title, updated = info.get("title"), info.get("updatedAt")
        if not isinstance(title, str) or title == self.title:
            return []
        self.title = title
        return [
            SessionInfoUpdate(
                session_update="session_info_update",
                title=title,
                updated_at=updated if isinstance(updated, str) else None,
            )
        ]

    def _permission_mode(self, info: JsonObject) -> list[Update]:
        """A switch of the permission mode by any client (or of the modes an agent switch
        allows) redraws the editor's selector."""
        mode, allowed = info.get("permissionMode"), info.get("permissionModes")
        modes = [str(m) for m in allowed] if isinstance(allowed, list) else self.permission_modes
        if not isinstance(mode, str) or (mode, modes) == (
            self.permission_mode,
            self.permission_modes,
        ):
            return []
        self.permission_mode, self.permission_modes = mode, modes
        update = self.config_options(self)
        return [update] if update is not None else []

    def _session(self, session: JsonObject) -> list[Update]:
        updates: list[Update] = []
        agent, model = session.get("agent"), session.get("model")
        if isinstance(agent, str) and agent != self.agent:
            self.agent = agent
            updates.append(
                CurrentModeUpdate(session_update="current_mode_update", current_mode_id=agent)
            )
        if isinstance(model, str) and model != self.model:
            self.model = model
            if (options := self.config_options(self)) is not None:
                updates.append(options)
        return updates

    def _started(self, item: Item) -> list[Update]:
        item_id, kind = str(item.get("itemId")), str(item.get("type"))
        self._types[item_id] = kind
        if kind == "tool_call":
            return [self.tool_call(item)]
        if kind == "tool_result":
            self._result_call[item_id] = str(item.get("callId"))
            return [self._progress(item, "in_progress")]
        if kind in ("agent_message", "reasoning") and item.get("text"):
            self._streamed.add(item_id)
            return [self._chunk(kind, str(item["text"]), item_id)]
        return []

    def _delta(self, change: ItemDelta) -> list[Update]:
        item_id, delta = change.item_id, change.delta
        kind = self._types.get(item_id)
        if not delta or kind is None:
            return []
        if kind in ("agent_message", "reasoning"):
            self._streamed.add(item_id)
            return [self._chunk(kind, delta, item_id)]
        if kind == "tool_result":
            if self._result_call.get(item_id) in self.terminal_calls:
                return []
            self._outputs[item_id] = self._outputs.get(item_id, "") + delta
            return [self._output(item_id)]
        return []

    def _completed(self, item: Item) -> list[Update]:
        item_id, kind = str(item.get("itemId")), str(item.get("type"))
        self._types.pop(item_id, None)
        streamed = item_id in self._streamed
        self._streamed.discard(item_id)
        if kind == "user_message":
            text = str(item.get("text") or "")
            if text in self.own_texts:
                self.own_texts.remove(text)
                return []
            return [self._user(item)]
        if kind in ("agent_message", "reasoning"):
            return [] if streamed or not item.get("text") else self.replay([item])
        if kind == "tool_call":
            if item.get("callId") in self.calls:
                return []
            return [self.tool_call(item)]
        if kind == "tool_result":
            self._outputs.pop(item_id, None)
            self._result_call.pop(item_id, None)
            return [self.tool_result(item)]
        if kind == "notice":
            return self.replay([item])
        return []

    # -- pieces --------------------------------------------------------------------------

    def _user(self, item: Item) -> UserMessageChunk:
        # Images are named, not resent: their bytes stay on the daemon (`/attachments`).
        names = [
            f"[image: {ref.get('name') or ref.get('mediaType')}]"
            for ref in item.get("images") or []
            if isinstance(ref, dict)
        ]
        text = " ".join([str(item.get("text") or ""), *names]).strip()
        return UserMessageChunk(
            session_update="user_message_chunk",
            content=_text(text),
            message_id=str(item.get("itemId")),
        )

    def _chunk(self, kind: str, text: str, item_id: str) -> AgentMessageChunk | AgentThoughtChunk:
        if kind == "reasoning":
            return AgentThoughtChunk(
                session_update="agent_thought_chunk", content=_text(text), message_id=item_id
            )
        return AgentMessageChunk(
            session_update="agent_message_chunk", content=_text(text), message_id=item_id
        )

    def tool_call(self, item: Item) -> ToolCallStart:
        call_id = str(item.get("callId"))
        name = str(item.get("name"))
        arguments = item.get("arguments")
        if not isinstance(arguments, dict):  # read from the wire: a malformed call shows no input
            arguments = {}
        self.calls[call_id] = Call(name, arguments, item.get("turnId"))
        diffs = tools.diffs(name, arguments, self.cwd)
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=call_id,
            title=tools.title(name, arguments),
            kind=tools.kind(name),
            status="pending",
            locations=tools.locations(name, arguments, self.cwd) or None,
            content=list(diffs) or None,
            raw_input=arguments,
        )

    def _call_name(self, call_id: str) -> str:
        call = self.calls.get(call_id)
        return call.name if call is not None else ""

    def _progress(self, item: Item, status: ToolCallStatus) -> ToolCallProgress:
        return ToolCallProgress(
            session_update="tool_call_update", tool_call_id=str(item.get("callId")), status=status
        )

    def _output(self, item_id: str) -> ToolCallProgress:
        # ACP replaces a call's content with each update: send all the output so far.
        call_id = self._result_call.get(item_id, item_id)
        return ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=call_id,
            status="in_progress",
            content=[tools.output(self._call_name(call_id), _tail(self._outputs[item_id]))],
        )

    def tool_result(self, item: Item) -> ToolCallProgress:
        call_id = str(item.get("callId"))
        self._finished.add(call_id)
        name = str(item.get("name") or self._call_name(call_id))
        call = self.calls.get(call_id)
        content: list[tools.ToolContent] = []
        failed = bool(item.get("isError")) or item.get("status") in ("interrupted", "failed")
        changes = tools.changes(item, self.cwd)
        # A failed call changed nothing: it shows no diff (ACP replaces the proposed one).
        if not failed:
            content.extend(changes or tools.diffs(name, call.arguments if call else {}, self.cwd))
        text = str(item.get("output") or "")
        if text:
            content.append(tools.output(name, text))
        return ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=call_id,
            status="failed" if failed else "completed",
            content=content if content or failed else None,
            raw_output={"output": text, "isError": bool(item.get("isError"))},
        )

    def settle(self, running_turn: str | None = None) -> list[Update]:
        """A turn that ended leaves no call running in the editor: one without a result (cut by
        an interrupt or a failure before it ran) is marked failed — except the running turn's."""
        updates: list[Update] = []
        for call_id, call in self.calls.items():
            if call_id in self._finished:
                continue
            if running_turn is None or call.turn_id != running_turn:
                self._finished.add(call_id)
                updates.append(
                    ToolCallProgress(
                        session_update="tool_call_update", tool_call_id=call_id, status="failed"
                    )
                )
        return updates

    def pending_call(self, name: str, arguments: Mapping[str, object]) -> str | None:
        """The callId of the latest call without a result that matches (what an approval is
        about: `approval/requested` names the tool and arguments, not the call)."""
        for call_id in reversed(list(self.calls)):
            call = self.calls[call_id]
            if call_id not in self._finished and (call.name, call.arguments) == (name, arguments):
                return call_id
        return None

    # -- history -------------------------------------------------------------------------

    def with_kept_cut(self, items: list[Item]) -> list[Item]:
        """The saved history `items` with the replies a crash cut short that this process kept
        (no daemon has them), each where it was."""
        root = self.view.sessions.get(self.root_session_id) if self.view else None
        if root is None or self.view is None or not self.view.kept_cut:
            return items
        return keep_cut_stream(root.items, None, items, None, self.view.kept_cut)

    def replay(self, items: list[Item]) -> list[Update]:
        """The updates that show saved items as they happened."""
        updates: list[Update] = []
        for item in items:
            kind, item_id = str(item.get("type")), str(item.get("itemId"))
            text = str(item.get("text") or "")
            # A subagent's report is a message to its parent, shown live too.
            if kind == "user_message" and item.get("origin", "user") in ("user", "subagent"):
                updates.append(self._user(item))
            elif kind in ("agent_message", "reasoning") and text:
                cut = item.get("status") == "interrupted"  # a reply a crash cut short, kept
                updates.append(self._chunk(kind, text + (INTERRUPTED_MARK if cut else ""), item_id))
            elif kind == "tool_call":
                updates.append(self.tool_call(item))
            elif kind == "tool_result":
                updates.append(self.tool_result(item))
            elif kind == "notice" and item.get("kind") != "interrupted" and text:
                updates.append(self._chunk("agent_message", f"\n\n_{text}_\n", item_id))
            elif kind == "summary" and text:
                updates.append(self._chunk("reasoning", text, item_id))
        return updates


def _changed_item(changes: list[Change], params: Params) -> Item:
    """The item as the fold keeps it after this notification."""
    for change in changes:
        item = getattr(change, "item", None)
        if isinstance(item, dict):
            return cast(Item, item)  # the fold keeps the item as it came: an `Item` on the wire
    item = params.get("item")
    return cast(Item, item) if isinstance(item, dict) else {}
