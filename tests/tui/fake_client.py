"""A client without a daemon, for terminal UI tests of what the UI does with a command: its
parsing, what it shows, the request it sends, a picker's keys, the sentence an error becomes.

`FakeClient` is a `Client` (the same typed interface the app takes) whose requests are answered
in process and whose notifications are what the test `emit`s. It is a faithful stand-in, not a
permissive one (tests/README.md):

- a method the protocol does not have, params the daemon would refuse (checked against
  `payloads.REQUEST_PARAMS` by the daemon's own check, protocol/validate.py), a method the test
  gave no answer for, and an answer, a notification or an item that is not the shape the daemon
  sends (`payloads.REQUEST_RESULTS`, `payloads.NOTIFICATION_PARAMS`, `records.ITEM_KINDS`) each
  fail the test: they raise `FakeMisuse` where they happen and the `no_fake_misuse` fixture
  (conftest.py) fails the test at its end even when the app swallowed the exception;
- answers are built from the protocol's TypedDicts with every field the daemon fills
  (tests/tui/fake_shapes.py: `conversation`, `session`, `model`, `item`…), so a test cannot pass
  on a shape the daemon never sends;
- notifications go through the client's own intake (`_on_notification`): stamped with the
  conversation's id and the next `seq`, dropped when the conversation is not subscribed.

By default it answers what opening a conversation needs (`conversation/create`,
`conversation/subscribe` of the conversations it holds, with the daemon's last page),
`conversation/list` and `conversation/read` (pages) of those, `models/list`, `agents/list` and
`mcp/list`; a test adds `answers` per method (a function of the params returning the result, or
raising `refusal(errors.X(…))` as the daemon would). What the daemon decides is tested against
the real daemon (tests/e2e/); the UI's side of it here (docs/design.md, "TUI command tests on a
faithful fake client").
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, cast

from openvaala_server.client import Client
from openvaala_server.domain.ids import new_id
from openvaala_server.errors import NotFound
from openvaala_server.protocol import methods
from openvaala_server.protocol import payloads as p
from openvaala_server.protocol.gen_calls import DAEMON_NOTIFICATIONS
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.runtime.conversation import SNAPSHOT_PAGE
from tests.tui.fake_shapes import (
    ADDRESS,
    CONFIG_PATH,
    CWD,
    Answer,
    FakeMisuse,
    agent,
    conforms,
    conversation,
    item,
    model,
    refusal,
    session,
    session_info,
    summary,
)

if TYPE_CHECKING:
    from openvaala_server.domain.records import Item


class FakeClient(Client):
    """Holds conversations (one empty one unless a test adds more with `add`) and answers as the
    daemon would; records every request in `requests`."""

    made: ClassVar[list[FakeClient]] = []  # every fake of the running test (no_fake_misuse)

    def __init__(
        self,
        answers: Mapping[str, Answer] | None = None,
        models: tuple[str, ...] = ("demo",),
        *,
        config: p.ConfigState | None = None,
        agents: tuple[p.AgentInfo, ...] | None = None,
    ) -> None:
        super().__init__(ADDRESS, "fake", client_name="openvaala-tui", reconnect=False)
        self.models = [model(name) for name in models]  # the first is the conversation's
        self.agents = list(agents or (agent(model_name=models[0]),))
        self.cwd = CWD  # the new conversation's, from `conversation/create`
        self.conversations: dict[str, p.Snapshot] = {}
        self.misuses: list[str] = []
        self.requests: list[tuple[str, JsonObject]] = []
        self.seqs: dict[str, itertools.count[int]] = {}
        self.server_info = cast(
            "JsonObject",
            {
                "config": config or {"path": CONFIG_PATH, "state": "ok", "message": ""},
                "serverInfo": {"name": "openvaala", "version": "0", "machine": "fake"},
                "protocolVersion": 1,
                "capabilities": {"inputModes": [], "maxFrameBytes": 1 << 20, "methods": []},
            },
        )
        conforms(p.InitializeResult, self.server_info, "initialize")
        self.answers: dict[str, Answer] = {
            methods.CONVERSATION_CREATE: self._create,
            methods.CONVERSATION_SUBSCRIBE: self._subscribe,
            methods.CONVERSATION_UNSUBSCRIBE: lambda params: {"unsubscribed": True},
            methods.CONVERSATION_LIST: self._list,
            methods.CONVERSATION_READ: self._page,
            methods.MODELS_LIST: lambda params: {"models": self.models},
            methods.AGENTS_LIST: lambda params: {"agents": self.agents},
            methods.MCP_LIST: lambda params: {"servers": []},
            **(answers or {}),
        }
        self._connected.set()
        FakeClient.made.append(self)

    # -- the conversations it holds ------------------------------------------------------------

    def add(self, cwd: str = CWD, items: tuple[str, ...] = (), **fields: Any) -> str:
        """A stored conversation in `cwd` whose root session holds a message and a reply per
        text of `items`; its id."""
        cid, root = new_id(), new_id()
        history: list[Item] = []
        for text in items:
            turn = new_id()
            history += [
                item("user_message", root, text, turnId=turn, origin="user", inputId=new_id()),
                item("agent_message", root, f"Reply to {text}", turnId=turn),
            ]
        info = conversation(cid, root, cwd, persisted=True, **fields)
        self.conversations[cid] = {
            "conversation": info,
            "sessions": [session(root, info["model"], items=history)],
            "approvals": [],
        }
        return cid

    def snapshot(self, cid: str) -> p.Snapshot:
        return self.conversations[cid]

    def info(self, cid: str) -> p.ConversationInfo:
        return self.conversations[cid]["conversation"]

    def root(self, cid: str) -> str:
        return self.info(cid)["rootSessionId"]

    def _create(self, params: JsonObject) -> p.ConversationResult:
        cid, root = new_id(), new_id()
        self.cwd = str(params.get("cwd", self.cwd))
        info = conversation(cid, root, self.cwd, model=self.models[0]["name"])
        self.conversations[cid] = {
            "conversation": info,
            "sessions": [session(root, info["model"])],
            "approvals": [],
        }
        return {"conversation": info}

    def _list(self, params: JsonObject) -> p.ListResult:
        """The stored conversations, newest first (the last added), archived or not as asked,
        on one page; `search` matches titles."""
        archived, search = bool(params.get("archived")), str(params.get("search") or "")
        rows = [
            summary(snap["conversation"])
            for snap in reversed(self.conversations.values())
            if snap["conversation"]["persisted"]
            and snap["conversation"]["archived"] == archived
            and search.lower() in snap["conversation"]["title"].lower()
        ]
        return {"conversations": rows}

    def _subscribe(self, params: JsonObject) -> p.SubscribeResult:
        cid = str(params["conversationId"])
        if cid not in self.conversations:
            raise refusal(NotFound(f"no conversation {cid}", param="conversationId"))
        seq = self.seqs.setdefault(cid, itertools.count(1))
        held = self.conversations[cid]
        # A session's last page only, as the daemon's snapshot (runtime/conversation.py).
        sessions: list[p.SessionSnapshot] = [
            {
                **s,
                "items": s["items"][-SNAPSHOT_PAGE:],
                "hasMore": s["hasMore"] or len(s["items"]) > SNAPSHOT_PAGE,
            }
            for s in held["sessions"]
        ]
        return {"seq": next(seq), "snapshot": {**held, "sessions": sessions}}

    def _page(self, params: JsonObject) -> p.ReadResult:
        """A page of a session's items: the `limit` before `beforeItem` (or the last ones)."""
        cid = str(params["conversationId"])
        sid = str(params.get("sessionId") or self.root(cid))
        held = next(s for s in self.snapshot(cid)["sessions"] if s["sessionId"] == sid)["items"]
        before = params.get("beforeItem")
        end = next((n for n, i in enumerate(held) if i["itemId"] == before), len(held))
        start = max(0, end - int(str(params.get("limit") or 100)))
        return {"items": held[start:end], "hasMore": start > 0}

    # -- what the daemon announces -------------------------------------------------------------

    def update(self, cid: str, **fields: Any) -> None:
        """The conversation changed (`conversation/updated`, as after a rename or a switch)."""
        info = self.info(cid)
        info.update(cast("p.ConversationInfo", fields))
        self.emit(methods.CONVERSATION_UPDATED, {"conversation": info}, cid)

    def update_session(self, cid: str, sid: str = "", **fields: Any) -> None:
        """A session changed (`session/updated`: its status, agent, model…); the root by default."""
        sessions = self.snapshot(cid)["sessions"]
        snap = next((s for s in sessions if s["sessionId"] == (sid or self.root(cid))), None)
        if snap is None:
            raise self.misuse(f"conversation {cid} has no session {sid}")
        snap.update(cast("p.SessionSnapshot", fields))
        self.emit(methods.SESSION_UPDATED, {"session": session_info(snap)}, cid)

    def start_turn(self, cid: str, text: str) -> str:
        """A turn of the root session starts on the user's `text`; its id."""
        root = self.root(cid)
        turn_id = new_id()
        self.update_session(cid, root, status="running")
        self.emit(methods.TURN_STARTED, {"sessionId": root, "turnId": turn_id}, cid)
        message = item("user_message", root, text, turnId=turn_id, origin="user", inputId=new_id())
        self.add_item(cid, message)
        return turn_id

    def add_item(self, cid: str, made: Item) -> None:
        """An item of the root session, as it completes (kept for a later subscribe)."""
        root = self.root(cid)
        self.emit(methods.ITEM_COMPLETED, {"sessionId": root, "item": made}, cid)
        self.snapshot(cid)["sessions"][0]["items"].append(made)

    def end_turn(self, cid: str, turn_id: str, status: str = "completed") -> None:
        root = self.root(cid)
        ended = {"sessionId": root, "turnId": turn_id, "status": status}
        self.emit(methods.TURN_ENDED, ended, cid)
        self.update_session(cid, root, status="idle" if status == "completed" else status)

    def turn(self, cid: str, text: str, reply: str = "") -> None:
        """A whole turn of the root session, as the daemon streams one: the message, the reply
        (when given) and the end; the conversation is stored from then on."""
        turn_id = self.start_turn(cid, text)
        if reply:
            self.add_item(cid, item("agent_message", self.root(cid), reply, turnId=turn_id))
        self.end_turn(cid, turn_id)
        if not self.info(cid)["persisted"]:
            self.update(cid, persisted=True, title=text[:40])

    def start_item(self, cid: str, turn_id: str, type_: str) -> Item:
        """A root session's item starts streaming (`item/started`, in progress, empty)."""
        started = item(type_, self.root(cid), "", turnId=turn_id, status="in_progress")
        self.emit(
            methods.ITEM_STARTED,
            {"sessionId": self.root(cid), "turnId": turn_id, "item": started},
            cid,
        )
        return started

    def delta(self, cid: str, streamed: Item, text: str) -> None:
        """More text of a streaming item (`item/delta`)."""
        params = {"sessionId": self.root(cid), "itemId": streamed["itemId"], "field": "text"}
        self.emit(methods.ITEM_DELTA, {**params, "delta": text}, cid)

    def on(self, method: str, effect: Callable[[JsonObject], object]) -> None:
        """Answer `method` with `{}` (its EmptyResult) once `effect(params)` has announced what
        the daemon would (`update`, `update_session`)."""

        def answer(params: JsonObject) -> p.EmptyResult:
            effect(params)
            return {}

        self.answers[method] = answer

    def answer_sends(self, reply: str = "Done.") -> None:
        """Every `input/send` runs a whole turn at once (`turn`), answered with `reply`."""

        def send(params: JsonObject) -> p.SendResult:
            cid, text = str(params["conversationId"]), str(params.get("text", ""))
            asyncio.get_running_loop().call_soon(lambda: self.turn(cid, text, reply))
            return {"inputId": new_id(), "disposition": "started"}

        self.answers[methods.INPUT_SEND] = send

    # -- the wire ------------------------------------------------------------------------------

    def misuse(self, problem: str) -> FakeMisuse:
        self.misuses.append(problem)
        return FakeMisuse(problem)

    async def _request(
        self,
        method: str,
        params: Mapping[str, object] | None = None,
        *,
        timeout: float = 60,
        on_result: Callable[[Any], None] | None = None,
    ) -> Any:
        given = cast("JsonObject", dict(params or {}))
        self.requests.append((method, given))
        if method not in methods.REQUESTS:
            raise self.misuse(f"{method} is no method of the protocol (protocol/methods.py)")
        try:
            conforms(p.REQUEST_PARAMS[method], given, f"{method}'s params", sent=False)
        except FakeMisuse as exc:
            raise self.misuse(str(exc)) from None
        # An answer comes in a later turn of the loop, as over a socket (no time passes): code
        # that runs meanwhile (a worker just started) runs as it would with the daemon.
        await asyncio.sleep(0)
        answer = self.answers.get(method)
        if answer is None:
            raise self.misuse(f"the test gave the fake no answer for {method}")
        result = answer(given)
        try:
            conforms(p.REQUEST_RESULTS[method], result, f"the answer to {method}")
        except FakeMisuse as exc:
            raise self.misuse(str(exc)) from None
        if on_result is not None:
            on_result(result)
        return result

    def emit(self, method: str, params: Mapping[str, object], cid: str | None = None) -> None:
        """A notification as the daemon sends it: a conversation's (`cid`, or the only one it
        holds) stamped with its id and next `seq`; the daemon's own ones as they are."""
        shape = p.NOTIFICATION_PARAMS.get(method)
        if shape is None:
            raise self.misuse(f"{method} is no notification of the protocol")
        try:
            conforms(shape, dict(params), f"{method}'s params")
        except FakeMisuse as exc:
            raise self.misuse(str(exc)) from None
        stamped = dict(params)
        if method not in DAEMON_NOTIFICATIONS:
            cid = cid or self.only()
            stamped.update(
                conversationId=cid, seq=next(self.seqs.setdefault(cid, itertools.count(1)))
            )
        self._on_notification(method, cast("JsonObject", stamped))

    def only(self) -> str:
        subscribed = [cid for cid in self.conversations if cid in self.last_seq]
        if len(subscribed) != 1:
            raise self.misuse(f"say which conversation: {len(subscribed)} are subscribed")
        return subscribed[0]

    def methods(self) -> list[str]:
        return [method for method, _ in self.requests]

    def params_of(self, method: str) -> list[JsonObject]:
        return [params for sent, params in self.requests if sent == method]
