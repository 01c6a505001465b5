"""One Codex client's connection: its methods, its threads, its approval questions
(docs/codex.md "Methods").

Each method calls the daemon's own (through `Upstream`) and shapes the answer as Codex's; each
conversation the client opened has a `ThreadFeed` that turns its notifications into Codex's.
`send` queues one outgoing message (the endpoint writes them in order)."""

from __future__ import annotations

import base64
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import Any, Final

import anyio

from openvaala_server import errors
from openvaala_server.codex import listing, overrides, rpc, startup, threads, wire
from openvaala_server.codex.events import Ask, Settled, ThreadFeed
from openvaala_server.codex.files import read_text
from openvaala_server.codex.ids import openvaala_id, thread_id
from openvaala_server.codex.inputs import user_message
from openvaala_server.codex.upstream import Upstream
from openvaala_server.domain.ids import new_id
from openvaala_server.protocol.json_types import JsonMapping, JsonObject, JsonValue

log = logging.getLogger(__name__)

Answer = dict[str, object]  # a method's result: Codex's shapes (wire.py) in a JSON object
Method = Callable[[JsonObject], Awaitable[JsonMapping | None]]
Send = Callable[[str], None]
Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], None]
# What a Codex approval decision means to OpenVaala (approval/respond).
DECISIONS: Final = {
    "accept": "allow",
    "acceptForSession": "allow_conversation",
    "decline": "deny",
    "cancel": "deny",
}
HISTORY_LIMIT: Final = 1000  # items read for a thread's turns (conversation/read's maximum)
SUBAGENT_COMPACT: Final = (
    "Not compacted: OpenVaala compacts a conversation's main agent. Open the conversation's "
    "own thread and compact there."
)
LIST_PAGE: Final = 50  # thread/list's page without a `limit` (conversation/list's default)
LIST_SCAN: Final = 1000  # conversations one thread/list reads at most to fill its page


class SessionDirectory:
    """Which conversation each subagent thread belongs to, for every Codex connection of the
    daemon: a subagent's thread id is its session's, and only its conversation knows it."""

    def __init__(self) -> None:
        self.conversation_of: dict[str, str] = {}  # sessionId → conversationId


class CodexSession:
    def __init__(
        self,
        upstream_factory: Callable[[Callable[[str, JsonObject], None]], Upstream],
        send: Send,
        spawn: Spawn,
        directory: SessionDirectory,
    ) -> None:
        self.up = upstream_factory(self._on_note)
        self.send = send
        self.spawn = spawn
        self.directory = directory
        self.initialized = False
        self.opted_out: set[str] = set()  # notifications the client asked not to get
        self.cwd_hint: str | None = None  # the client's directory, as its start-up calls name it
        self.feeds: dict[str, ThreadFeed] = {}  # conversationId → feed
        # request → (conversation, approval, the thread that asks)
        self.asked: dict[rpc.RequestId, tuple[str, str, str]] = {}
        self.asking: dict[str, rpc.RequestId] = {}  # approval → request
        # A thread this client reverted names the rewound copy from then on (docs/codex.md
        # "Rewinding"): the thread's conversation id → the copy's.
        self.rewound: dict[str, str] = {}
        # The subagent threads this client closed (thread/unsubscribe): followed with their
        # conversation, so not told about until it opens them again (docs/codex.md "Methods").
        self.closed: set[str] = set()
        # What follows the answer of the request being handled (sent after it, in order).
        self.after_answer: list[Callable[[], None]] = []
        self._next_request = 0
        self.methods: dict[str, Method] = {
            "thread/start": self.thread_start,
            "thread/resume": self.thread_resume,
            "thread/read": self.thread_read,
            "thread/list": self.thread_list,
            "thread/turns/list": self.thread_turns_list,
            "thread/loaded/list": self.thread_loaded_list,
            "thread/archive": self.thread_archive,
            "thread/unarchive": self.thread_unarchive,
            "thread/name/set": self.thread_name_set,
            "thread/fork": self.thread_fork,
            "thread/revert": self.thread_revert,
            "thread/rollback": self.thread_rollback,
            "thread/unsubscribe": self.thread_unsubscribe,
            "thread/compact/start": self.thread_compact_start,
            "thread/settings/update": self.thread_settings_update,
            "turn/start": self.turn_start,
            "turn/steer": self.turn_steer,
            "turn/interrupt": self.turn_interrupt,
        }

    # -- dispatch --------------------------------------------------------------------------

    async def handle(self, frame: str) -> None:
        incoming = rpc.parse(frame)
        if isinstance(incoming, rpc.Invalid):
            self.send(rpc.error(incoming.id, incoming.error))
        elif isinstance(incoming, rpc.Response):
            try:
                await self._answered(incoming)
            except Exception:  # the connection keeps serving; the turn still waits for an answer
                log.exception("codex: an approval answer could not be passed on")
        elif isinstance(incoming, rpc.Request):
            try:
                result = await self._call(incoming.method, incoming.params)
            except errors.OpenVaalaError as exc:
                self.send(rpc.error(incoming.id, exc))
            except Exception:
                log.exception("codex request %s failed", incoming.method)
                internal = errors.OpenVaalaError("internal error: the server log has the details")
                self.send(rpc.error(incoming.id, internal))
            else:
                self.send(rpc.result(incoming.id, result))
                for then in self.after_answer:
                    then()
            self.after_answer.clear()
        # Notifications from the client (`initialized`) carry nothing to act on.

    async def _call(self, method: str, params: JsonObject) -> JsonMapping | None:
        # Refused as Codex's own app-server refuses them (its code and words, docs/codex.md).
        if method == "initialize":
            if self.initialized:
                raise errors.InvalidRequest("Already initialized")
            if not isinstance(params.get("clientInfo"), dict):
                raise errors.InvalidRequest("Invalid request: missing field `clientInfo`")
            self.initialized = True
            capabilities = params.get("capabilities")
            opt_out = (
                capabilities.get("optOutNotificationMethods")
                if isinstance(capabilities, dict)
                else None
            )
            self.opted_out = (
                {m for m in opt_out if isinstance(m, str)} if isinstance(opt_out, list) else set()
            )
            return await startup.initialize(self.up, params)
        if not self.initialized:
            raise errors.InvalidRequest("Not initialized")
        self._note_cwd(params)
        answer = startup.ANSWERS.get(method)
        if answer is not None:
            return await answer(self.up, params)
        handler = self.methods.get(method)
        if handler is None:
            raise errors.MethodNotFound(
                f"{method[:100]!r} is not supported by OpenVaala's app-server (docs/codex.md)"
            )
        return await handler(params)

    def notify(self, method: str, params: JsonMapping) -> None:
        if method in self.opted_out:
            return
        # A closed subagent thread's approvals are still asked (`_ask`), so still resolved.
        still_told = ("thread/closed", "serverRequest/resolved")
        if params.get("threadId") in self.closed and method not in still_told:
            return
        self.send(rpc.notification(method, params))

    def _note_cwd(self, params: JsonObject) -> None:
        cwds = params.get("cwds")
        if isinstance(cwds, list) and cwds and isinstance(cwds[0], str):
            self.cwd_hint = cwds[0]

    def close(self) -> None:
        self.up.close()

    # -- notifications from the daemon -----------------------------------------------------

    def _on_note(self, method: str, params: JsonObject) -> None:
        # Called from the daemon's publishing: a fault here must not reach the conversation.
        try:
            self._follow(method, params)
        except Exception:
            log.exception("codex: could not map %s for a Codex client", method)

    def _follow(self, method: str, params: JsonObject) -> None:
        cid = params.get("conversationId")
        feed = self.feeds.get(cid) if isinstance(cid, str) else None
        if feed is None:
            return
        if method == "session/started" and isinstance(params.get("session"), dict):
            session = params["session"]
            assert isinstance(session, dict)
            self.directory.conversation_of[str(session["sessionId"])] = feed.info["conversationId"]  # type: ignore[assignment]
        for out in feed.feed(method, params):
            if isinstance(out, Ask):
                self._ask(str(cid), out)
            elif isinstance(out, Settled):
                request = self.asking.pop(out.approval_id, None)
                if request is not None:
                    self.asked.pop(request, None)
                    params_out = {"threadId": out.thread_id, "requestId": request}
                    self.notify("serverRequest/resolved", params_out)
            else:
                self.notify(out["method"], out["params"])

    def _ask(self, cid: str, ask: Ask) -> None:
        self._next_request += 1
        request: rpc.RequestId = f"openvaala-approval-{self._next_request}"
        self.asked[request] = (cid, ask.approval_id, ask.thread_id)
        self.asking[ask.approval_id] = request
        self.send(rpc.request(request, ask.method, ask.params))

    async def _answered(self, response: rpc.Response) -> None:
        asked = self.asked.pop(response.id, None) if response.id is not None else None
        if asked is None:
            return
        cid, approval, thread = asked
        self.asking.pop(approval, None)
        decision = response.result.get("decision") if isinstance(response.result, dict) else None
        answer = DECISIONS.get(decision) if isinstance(decision, str) else None
        if response.error is not None or answer is None:
            answer = "deny"  # a client that cannot answer does not let the call run
        try:
            await self.up.request(
                "approval/respond",
                {"conversationId": cid, "approvalId": approval, "decision": answer},
            )
        except errors.OpenVaalaError as exc:  # answered by another client first: nothing to do
            log.debug("approval %s: %s", approval, exc.message)
            return
        if decision == "cancel":  # Codex's "deny, and stop the turn" (docs/codex.md)
            await self.turn_interrupt({"threadId": thread})

    # -- threads ---------------------------------------------------------------------------

    def _locate(self, params: JsonObject, key: str = "threadId") -> tuple[str, str | None]:
        """(conversationId, sessionId or None for the root) of a client's thread id."""
        plain = openvaala_id(params.get(key), key)
        cid = self.directory.conversation_of.get(plain)
        return (cid, plain) if cid is not None else (self.rewound.get(plain, plain), None)

    def _conversation_of(self, p: JsonObject, done: str, do: str) -> str:
        """The conversation of a thread that must be a conversation's own: what OpenVaala
        does to a whole conversation (`done` to it) is refused on a subagent's thread, rather
        than done to the conversation around it (docs/codex.md "Methods")."""
        cid, sid = self._locate(p)
        if sid is not None:
            raise errors.InvalidParams(
                f"a subagent's thread cannot be {done}: {do} its conversation's thread",
                param="threadId",
            )
        return cid

    def _as_id(self, cid: str) -> str | None:
        """The thread id this client knows a rewound copy by; None for any other conversation."""
        codex = next((old for old, new in self.rewound.items() if new == cid), None)
        return thread_id(codex) if codex is not None else None

    def _thread_id(self, cid: str) -> str:
        return self._as_id(cid) or thread_id(cid)

    async def _open(self, cid: str) -> tuple[ThreadFeed, JsonObject]:
        """Subscribe to a conversation (again: a fresh snapshot) and follow it."""
        result = await self.up.request("conversation/subscribe", {"conversationId": cid})
        snapshot = result["snapshot"]
        assert isinstance(snapshot, dict)
        info = snapshot["conversation"]
        assert isinstance(info, dict)
        # A fresh feed: the snapshot is the truth from here (a resubscription replaces the
        # earlier one, docs/protocol.md), and the events that follow continue it.
        feed = ThreadFeed(info, as_id=self._as_id(cid), read_file=read_text)
        earlier = self.feeds.get(cid)
        if earlier is not None:  # what this client chose stays its (the agent before plan mode)
            feed.plan, feed.policy = earlier.plan, earlier.policy
        self.feeds[cid] = feed
        for session in threads.sessions(snapshot):
            sid = str(session["sessionId"])
            self.directory.conversation_of[sid] = cid
            turn = session.get("turn")
            if isinstance(turn, dict):
                feed.turn_of[sid] = feed.last_turn[sid] = str(turn["turnId"])
                await self._find_calls(feed, cid, sid)
                running = turn.get("items")
                for item in running if isinstance(running, list) else []:
                    if isinstance(item, dict):  # streaming still: its deltas and its result
                        feed.started[str(item["itemId"])] = str(item.get("type"))
                        if item.get("type") == "tool_call":
                            feed.calls[str(item["callId"])] = item  # type: ignore[assignment]
                        elif item.get("type") == "tool_result":
                            feed.result_call[str(item["itemId"])] = str(item["callId"])
            feed.statuses[sid] = str(session.get("status"))
            model = str(session.get("model") or "")
            feed.settings[sid] = (model, str(session.get("agent") or ""))
            feed.told_model.setdefault(sid, model)  # what the thread's answers report
        feed.told_cwd = feed.cwd
        # Approvals waiting already are asked too, once the client knows the thread (after the
        # answer); one this client was asked already keeps its request.
        approvals = snapshot.get("approvals")
        for approval in approvals if isinstance(approvals, list) else []:
            if isinstance(approval, dict) and approval.get("approvalId") not in self.asking:
                self.after_answer.append(partial(self._follow, "approval/requested", approval))
        return feed, snapshot

    async def _find_calls(self, feed: ThreadFeed, cid: str, sid: str) -> None:
        """The tool calls of a running session still waiting for their results (running, or
        waiting for an approval, which names its call's item), from its latest items: saved
        already, they are not in the snapshot's running turn."""
        page = await self.up.request(
            "conversation/read", {"conversationId": cid, "sessionId": sid, "limit": 50}
        )
        saved = page.get("items")
        recent = [i for i in (saved if isinstance(saved, list) else []) if isinstance(i, dict)]
        answered = {i.get("callId") for i in recent if i.get("type") == "tool_result"}
        for item in recent:
            if item.get("type") == "tool_call" and item.get("callId") not in answered:
                feed.calls[str(item["callId"])] = item  # type: ignore[assignment]

    async def _peek(self, cid: str) -> JsonObject:
        """A conversation's snapshot, without following it when the client does not."""
        if cid in self.feeds:
            return (await self._open(cid))[1]
        result = await self.up.request("conversation/subscribe", {"conversationId": cid})
        await self.up.request("conversation/unsubscribe", {"conversationId": cid})
        snapshot = result["snapshot"]
        assert isinstance(snapshot, dict)
        for session in threads.sessions(snapshot):  # its subagents' threads can be named now
            self.directory.conversation_of[str(session["sessionId"])] = cid
        return snapshot

    def _thread(self, snapshot: JsonObject, sid: str | None, turns: list[wire.Turn]) -> wire.Thread:
        info = snapshot["conversation"]
        assert isinstance(info, dict)
        session = threads.session(snapshot, sid) if sid is not None else None
        as_id = self._as_id(str(info["conversationId"]))
        thread = (
            threads.session_thread(info, session, as_id=as_id)
            if session
            else threads.conversation_thread(info, as_id=as_id)
        )
        thread["turns"] = turns
        return thread

    def _thread_answer(self, thread: wire.Thread, snapshot: JsonObject) -> Answer:
        info = snapshot.get("conversation")
        mode = info.get("permissionMode") if isinstance(info, dict) else None
        approval, sandbox = threads.policies(mode)
        feed = self.feeds.get(str(info["conversationId"])) if isinstance(info, dict) else None
        if feed is not None:  # what the client holds now: sent back, it is no choice
            feed.policy.told = overrides.policy_mode(approval, sandbox)
        return {
            "thread": thread,
            "model": thread["model"] or "",
            "modelProvider": threads.MODEL_PROVIDER,
            "serviceTier": None,
            "disabledPluginIds": [],
            "cwd": thread["cwd"],
            "instructionSources": [],
            "approvalPolicy": approval,
            "approvalsReviewer": "user",
            "sandbox": sandbox,
            "reasoningEffort": None,
        }

    async def _turns(self, cid: str, sid: str | None, snapshot: JsonObject) -> list[wire.Turn]:
        page = await self.up.request(
            "conversation/read",
            {"conversationId": cid, "sessionId": sid, "limit": HISTORY_LIMIT},
        )
        saved = page.get("items")
        session = threads.session(snapshot, sid)
        running = session.get("turn") if session else None
        items = list(saved) if isinstance(saved, list) else []
        running_id = None
        if isinstance(running, dict):
            running_id = str(running["turnId"])
            extra = running.get("items")
            items.extend(extra if isinstance(extra, list) else [])
        info = snapshot["conversation"]
        assert isinstance(info, dict)
        return threads.turns(items, str(info.get("cwd")), running_id)  # type: ignore[arg-type]

    async def thread_start(self, p: JsonObject) -> Answer:
        cwd = p.get("cwd") if isinstance(p.get("cwd"), str) else self.cwd_hint
        params: JsonObject = {"cwd": cwd or str(Path.home())}
        if isinstance(p.get("model"), str):
            params["model"] = p["model"]
        created = await self.up.request("conversation/create", params)
        info = created["conversation"]
        assert isinstance(info, dict)
        cid = str(info["conversationId"])
        _, snapshot = await self._open(cid)
        thread = self._thread(snapshot, None, [])
        self.notify("thread/started", {"thread": thread})
        return self._thread_answer(thread, snapshot)

    async def thread_resume(self, p: JsonObject) -> Answer:
        cid, sid = self._locate(p)
        if sid is not None:
            self.closed.discard(thread_id(sid))
        _, snapshot = await self._open(cid)
        turns = [] if p.get("excludeTurns") else await self._turns(cid, sid, snapshot)
        answer = self._thread_answer(self._thread(snapshot, sid, turns), snapshot)
        answer.update(
            {"collaborationMode": None, "turnsBackwardsCursor": None, "itemsBackwardsCursor": None}
        )
        return answer

    async def thread_read(self, p: JsonObject) -> Answer:
        cid, sid = self._locate(p)
        snapshot = await self._peek(cid)
        turns = await self._turns(cid, sid, snapshot) if p.get("includeTurns") else []
        return {"thread": self._thread(snapshot, sid, turns)}

    async def thread_list(self, p: JsonObject) -> Answer:
        """A page of threads, filtered as Codex filters them (listing.py). The daemon lists
        conversations; the filters apply here, so pages are read until `limit` threads match
        (or LIST_SCAN conversations were read: the client goes on with `nextCursor`)."""
        below = p.get("parentThreadId") is not None or p.get("ancestorThreadId") is not None
        wanted = listing.thread_filter(p, below=below)
        for key in ("parentThreadId", "ancestorThreadId"):
            if p.get(key) is not None:
                return await self._subagent_threads(p, key, wanted)
        limit = p.get("limit")
        want = max(1, min(500, limit)) if isinstance(limit, int) else LIST_PAGE
        params: JsonObject = {"archived": bool(p.get("archived"))}
        if isinstance(p.get("searchTerm"), str) and p["searchTerm"]:
            params["search"] = p["searchTerm"]
        cursor = p.get("cursor") if isinstance(p.get("cursor"), str) else None
        data: list[wire.Thread] = []
        scanned = 0
        while wanted.conversations or wanted.subagents:
            # Only as many as still wanted: every conversation read is listed or filtered
            # out, so the cursor never skips one.
            params["limit"] = max(1, want - len(data))
            if cursor is not None:
                params["cursor"] = cursor
            page = await self.up.request("conversation/list", params)
            rows = page.get("conversations")
            for row in rows if isinstance(rows, list) else []:
                if isinstance(row, dict):
                    data.extend(await self._listed(row, wanted))
            scanned += len(rows) if isinstance(rows, list) else 0
            cursor = str(page["nextCursor"]) if page.get("nextCursor") else None
            if cursor is None or len(data) >= want or scanned >= LIST_SCAN:
                break
        return {"data": data, "nextCursor": cursor}

    async def _listed(self, row: JsonObject, wanted: listing.ThreadFilter) -> list[wire.Thread]:
        """One listed conversation's threads that match: its own, then its subagents'."""
        cid = str(row.get("conversationId"))
        if cid in self.rewound:  # a conversation this client reverted is its rewound copy now
            return []
        own = threads.conversation_thread(row, loaded=cid in self.feeds, as_id=self._as_id(cid))
        found = [own] if wanted.conversations and wanted.matches(own) else []
        if wanted.subagents:
            snapshot = await self._peek(cid)
            info = snapshot["conversation"]
            assert isinstance(info, dict)
            for session in threads.sessions(snapshot):
                if session.get("parentSessionId") is not None:
                    sub = threads.session_thread(info, session, as_id=self._as_id(cid))
                    found.extend([sub] if wanted.matches(sub) else [])
        return found

    async def _subagent_threads(
        self, p: JsonObject, key: str, wanted: listing.ThreadFilter
    ) -> Answer:
        """The subagents' threads below a thread: its children, or all its descendants."""
        cid, sid = self._locate(p, key)
        snapshot = await self._peek(cid)
        info = snapshot["conversation"]
        assert isinstance(info, dict)
        if bool(p.get("archived")) != bool(info.get("archived")):
            return {"data": [], "nextCursor": None}  # a subagent is archived with its conversation
        top = sid or str(info["rootSessionId"])
        sessions = [s for s in threads.sessions(snapshot) if s.get("parentSessionId") is not None]
        below, found = {top}, True
        while found and key == "ancestorThreadId":
            grown = below | {
                str(s["sessionId"]) for s in sessions if s.get("parentSessionId") in below
            }
            found, below = grown != below, grown
        as_id = self._as_id(cid)
        data: list[wire.Thread] = [
            thread
            for s in sessions
            if s.get("parentSessionId") in below
            and wanted.matches(thread := threads.session_thread(info, s, as_id=as_id))
        ]
        return {"data": data, "nextCursor": None}

    async def thread_turns_list(self, p: JsonObject) -> Answer:
        cid, sid = self._locate(p)
        snapshot = await self._peek(cid)
        turns = await self._turns(cid, sid, snapshot)
        if p.get("sortDirection") != "asc":
            turns.reverse()
        limit = p.get("limit")
        if isinstance(limit, int) and limit > 0:
            turns = turns[:limit]
        return {"data": turns, "nextCursor": None, "backwardsCursor": None}

    async def thread_loaded_list(self, p: JsonObject) -> Answer:
        """The threads this client follows: its conversations', and their subagents' that it
        has not closed (a subagent's thread is loaded with its conversation, as in Codex)."""
        data: list[JsonValue] = [self._thread_id(cid) for cid in self.feeds]
        for sid, cid in list(self.directory.conversation_of.items()):
            feed = self.feeds.get(cid)
            if feed is not None and sid != feed.root and thread_id(sid) not in self.closed:
                data.append(thread_id(sid))
        return {"data": data, "nextCursor": None}

    async def thread_archive(self, p: JsonObject) -> Answer:
        cid = self._conversation_of(p, "archived", "archive")
        await self.up.request("conversation/archive", {"conversationId": cid})
        if cid not in self.feeds:  # a follower hears it from conversation/updated
            self.notify("thread/archived", {"threadId": self._thread_id(cid)})
        return {}

    async def thread_unarchive(self, p: JsonObject) -> Answer:
        cid = self._conversation_of(p, "unarchived", "unarchive")
        await self.up.request("conversation/unarchive", {"conversationId": cid})
        if cid not in self.feeds:
            self.notify("thread/unarchived", {"threadId": self._thread_id(cid)})
        return {"thread": self._thread(await self._peek(cid), None, [])}

    async def thread_name_set(self, p: JsonObject) -> Answer:
        cid = self._conversation_of(p, "renamed", "rename")
        name = p.get("name")
        await self.up.request("conversation/rename", {"conversationId": cid, "title": name})
        if cid not in self.feeds:  # a follower hears it from conversation/updated
            params = {"threadId": self._thread_id(cid), "threadName": name}
            self.notify("thread/name/updated", params)
        return {}

    async def thread_fork(self, p: JsonObject) -> Answer:
        cid = self._conversation_of(p, "forked", "fork")
        params: JsonObject = {"conversationId": cid}
        last_turn = p.get("lastTurnId")
        if isinstance(last_turn, str) and last_turn:
            snapshot = await self._peek(cid)
            turn = threads.find_turn(await self._turns(cid, None, snapshot), last_turn)
            params["upToItemId"] = threads.last_item_id(turn)
        forked = await self.up.request("conversation/fork", params)
        return await self._opened_copy(forked)

    async def thread_revert(self, p: JsonObject) -> Answer:
        """Codex changes the thread itself (its TUI waits for `thread/reverted` of the same id);
        OpenVaala never rewrites history: the rewind is a copy, which this client's thread id
        names from now on (docs/codex.md "Rewinding")."""
        codex_cid = openvaala_id(p.get("threadId"))
        cid = self._conversation_of(p, "reverted", "revert")
        snapshot = await self._peek(cid)
        turns = await self._turns(cid, None, snapshot)
        turn = threads.find_turn(turns, p.get("beforeTurnId"))
        rewound = await self.up.request(
            "conversation/rewind", {"conversationId": cid, "messageId": _first_message(turn)}
        )
        info = rewound["conversation"]
        assert isinstance(info, dict)
        new = str(info["conversationId"])
        if self.feeds.pop(cid, None) is not None:  # the original goes on without this client
            await self.up.request("conversation/unsubscribe", {"conversationId": cid})
        self.rewound[codex_cid] = new
        _, snapshot = await self._open(new)
        answer = self._thread_answer(self._thread(snapshot, None, []), snapshot)
        answer.update({"turnsBackwardsCursor": None, "itemsBackwardsCursor": None})
        reverted = {"threadId": thread_id(codex_cid)}
        self.after_answer.append(lambda: self.notify("thread/reverted", reverted))
        return answer

    async def thread_rollback(self, p: JsonObject) -> Answer:
        """Codex's older `thread/rollback {numTurns}`: the same rewind, counted from the end."""
        cid = self._conversation_of(p, "rolled back", "roll back")
        count = p.get("numTurns")
        if not isinstance(count, int) or count < 1:
            raise errors.InvalidParams('"numTurns" must be an integer ≥ 1', param="numTurns")
        turns = await self._turns(cid, None, await self._peek(cid))
        if count > len(turns):
            raise errors.InvalidParams(f"the thread has only {len(turns)} turns", param="numTurns")
        return await self._rewind(cid, turns[-count])

    async def _rewind(self, cid: str, turn: wire.Turn) -> Answer:
        rewound = await self.up.request(
            "conversation/rewind", {"conversationId": cid, "messageId": _first_message(turn)}
        )
        answer = await self._opened_copy(rewound)
        answer.update({"turnsBackwardsCursor": None, "itemsBackwardsCursor": None})
        return answer

    async def _opened_copy(self, result: JsonObject) -> Answer:
        """A fork or a rewind: followed at once, announced, answered with its history."""
        info = result["conversation"]
        assert isinstance(info, dict)
        new = str(info["conversationId"])
        _, snapshot = await self._open(new)
        thread = self._thread(snapshot, None, await self._turns(new, None, snapshot))
        self.notify("thread/started", {"thread": {**thread, "turns": []}})
        return self._thread_answer(thread, snapshot)

    async def thread_unsubscribe(self, p: JsonObject) -> Answer:
        cid, sid = self._locate(p)
        if sid is not None:
            # One feed follows the whole conversation: closing a subagent's thread only stops
            # telling this client about it; its parent's thread stays followed.
            child = thread_id(sid)
            if cid not in self.feeds or child in self.closed:
                return {"status": "notSubscribed"}
            self.closed.add(child)
            self.notify("thread/closed", {"threadId": child})
            return {"status": "unsubscribed"}
        if self.feeds.pop(cid, None) is None:
            return {"status": "notSubscribed"}
        await self.up.request("conversation/unsubscribe", {"conversationId": cid})
        self.notify("thread/closed", {"threadId": self._thread_id(cid)})
        return {"status": "unsubscribed"}

    async def thread_compact_start(self, p: JsonObject) -> Answer:
        cid, sid = self._locate(p)
        if sid is not None:
            # OpenVaala compacts a conversation's root agent (`conversation/compact`). Not an
            # error: the Codex TUI exits on a failed thread/compact/start. A turn says why.
            feed = self.feeds.get(cid) or (await self._open(cid))[0]
            said = feed.compaction_refused(new_id(), None, None, sid=sid, warning=SUBAGENT_COMPACT)
            self.after_answer.extend(partial(self.notify, o["method"], o["params"]) for o in said)
            return {}
        if cid not in self.feeds:
            await self._open(cid)

        async def compact() -> None:
            feed = self.feeds.get(cid)
            shown = feed.compaction_turns if feed is not None else 0
            reason: str | None = None
            error: JsonObject | None = None
            try:
                result = await self.up.request("conversation/compact", {"conversationId": cid})
            except errors.OpenVaalaError as exc:
                error = {"kind": exc.kind, "message": exc.message}
            else:
                reason = str(result.get("reason") or "") or None
            feed = self.feeds.get(cid)
            # The compaction's own events showed it as a turn (compaction/started, then
            # completed or failed): nothing to add. Otherwise nothing did, and the client waits.
            if feed is not None and feed.compaction_turns == shown:
                for out in feed.compaction_refused(new_id(), reason, error):
                    self.notify(out["method"], out["params"])

        self.spawn(compact)
        return {}

    # -- turns -----------------------------------------------------------------------------

    async def _send_input(self, p: JsonObject, mode: str) -> tuple[str, str | None, ThreadFeed]:
        cid, sid = self._locate(p)
        feed = self.feeds.get(cid) or (await self._open(cid))[0]
        message = user_message(p.get("input"))
        await self._apply_overrides(cid, sid, feed, p)
        # A relative `localImage` is the thread's: the daemon's own directory means nothing
        # to a client (docs/codex.md "Methods").
        given = p.get("cwd")
        base = given if isinstance(given, str) and given else feed.cwd
        for path in message.paths:
            message.images.append(await _read_image(os.path.join(base, path)))
        params: JsonObject = {"conversationId": cid, "text": message.text, "mode": mode}
        if sid is not None:
            params["sessionId"] = sid
        if message.images:
            params["images"] = list[JsonValue](message.images)
        await self.up.request("input/send", params)
        return cid, sid, feed

    async def _apply_overrides(
        self, cid: str, sid: str | None, feed: ThreadFeed, p: JsonObject
    ) -> None:
        """The settings a `turn/start` (before its input) or `thread/settings/update` changes:
        model, cwd, the permission mode and plan mode (overrides.py)."""
        model = feed.model_choice(sid or feed.root, p.get("model"))
        if model is not None:
            # "For this turn and subsequent turns": the session's model.
            change: JsonObject = {"conversationId": cid, "model": model}
            if sid is not None:
                change["sessionId"] = sid
            await self.up.request("conversation/setModel", change)
        cwd = feed.cwd_choice(p.get("cwd"))
        if cwd is not None:
            await self.up.request("conversation/setCwd", {"conversationId": cid, "cwd": cwd})
        if sid is not None:
            return  # a subagent's agent is its parent's choice (docs/codex.md)
        mode = feed.mode_choice(p.get("approvalPolicy"), p.get("sandboxPolicy"))
        if mode is not None:  # narrower than the conversation's: the daemon takes it
            await self.up.request(
                "conversation/setPermissionMode", {"conversationId": cid, "mode": mode}
            )
        agent = feed.agent_choice(p.get("collaborationMode"))
        if agent is None:
            return
        try:
            await self.up.request("conversation/setAgent", {"conversationId": cid, "agent": agent})
        except errors.AgentMissing:
            feed.plan.refused(feed.root)
            raise errors.InvalidParams(
                f"Codex's plan mode is OpenVaala's agent named {agent!r}, which is not "
                f"configured: add [agents.{agent}] to config.toml (docs/codex.md)",
                param="collaborationMode",
            ) from None

    async def thread_settings_update(self, p: JsonObject) -> Answer:
        """The Codex TUI's way to change a thread's settings between turns (Shift+Tab's plan
        mode, `/model`): the same mapping as `turn/start`'s overrides."""
        cid, sid = self._locate(p)
        feed = self.feeds.get(cid) or (await self._open(cid))[0]
        await self._apply_overrides(cid, sid, feed, p)
        return {}

    async def turn_start(self, p: JsonObject) -> Answer:
        # A turn/start while a turn runs joins it, as in Codex: OpenVaala's steer.
        _, sid, feed = await self._send_input(p, "steer")
        session = sid or feed.root
        turn_id = feed.turn_of.get(session) or feed.last_turn.get(session, "")
        turn = feed._turn(session, turn_id, "inProgress", None)
        return {"turn": turn}

    async def turn_steer(self, p: JsonObject) -> Answer:
        cid, sid = self._locate(p)
        feed = self.feeds.get(cid) or (await self._open(cid))[0]
        running = feed.turn_of.get(sid or feed.root)
        expected = p.get("expectedTurnId")
        if running is None or (isinstance(expected, str) and expected.replace("-", "") != running):
            raise errors.TurnRunning(  # the closest error: the turn is not the one expected
                f"no running turn {expected!r} to steer in this thread (running: {running})",
                param="expectedTurnId",
            )
        await self._send_input(p, "steer")
        return {"turnId": running}

    async def turn_interrupt(self, p: JsonObject) -> Answer:
        cid, sid = self._locate(p)
        params: JsonObject = {"conversationId": cid}
        if sid is not None:
            params["sessionId"] = sid
        await self.up.request("turn/interrupt", params)
        return {}


def _first_message(turn: wire.Turn) -> str:
    """The user's message a rewind to `turn` goes back to (conversation/rewind's `messageId`)."""
    message = next((i["id"] for i in turn["items"] if i["type"] == "userMessage"), None)
    if message is None:
        raise errors.InvalidParams(
            f"turn {turn['id']} has no message of the user's to rewind to", param="beforeTurnId"
        )
    return message


async def _read_image(path: str) -> JsonObject:
    """A `localImage` the client named, read off the loop (the daemon runs as the user)."""
    try:
        data = await anyio.Path(path).read_bytes()
    except OSError as exc:
        raise errors.InvalidParams(
            f"cannot read the image {path}: {exc.strerror}", param="input"
        ) from None
    return {"data": base64.b64encode(data).decode(), "name": Path(path).name}
