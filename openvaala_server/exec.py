"""`openvaala exec "prompt"`: one turn through the daemon, for scripts (like `codex exec`).

The reply goes to stdout as it streams (`--json`: every notification of the conversation as one
JSON line); everything else — tool calls, retries, errors, the conversation id — goes to stderr,
so `openvaala exec "…" > out.txt` holds the answer alone.

Nobody is there to answer an approval: one the agent asks fails the call (the turn is interrupted,
exit 3) unless an `--allow` rule matches it, which answers "allow" for that one call. A rule is a
tool name (`write_file`, `mcp__srv__tool`), `TOOL(PATTERN)` (`shell(git diff*)`: `PATTERN` uses the
syntax of an agent's `allow` patterns, docs/configuration.md, and is matched against the command,
or the file path of a file tool), or `*` (every call). As in the config, a shell pattern never
matches a command holding a control operator (docs/security.md).

Exit status (docs/design.md, "openvaala exec"): see the `EXIT_*` constants.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from openvaala_server.client.view import (
    Change,
    ConversationView,
    ItemAdded,
    ItemDelta,
    ItemUpdated,
    Params,
    StatusChanged,
    TurnEnded,
    TurnStarted,
)
from openvaala_server.domain.approvals import allowed_by, has_control_operator, pattern_matches
from openvaala_server.domain.short_ids import IdPrefixError
from openvaala_server.exec_words import (
    config_warning,
    cwd_gone,
    slash_call,
    tool_line,
    unknown_tool,
)
from openvaala_server.protocol import codec, methods
from openvaala_server.protocol.display import scrub

if TYPE_CHECKING:
    from openvaala_server.client import Client
    from openvaala_server.client.connection import Note
    from openvaala_server.protocol import payloads
    from openvaala_server.protocol.json_types import JsonObject

EXIT_OK = 0  # the turn completed
EXIT_FAILED = 1  # the turn failed (the model or a provider error), or the daemon refused a request
EXIT_USAGE = 2  # bad arguments: no prompt, a bad --allow rule, a missing --cwd (argparse uses 2)
EXIT_APPROVAL = 3  # the agent asked for an approval no --allow rule grants
EXIT_NO_DAEMON = 4  # the daemon could not be reached or started, or it went away mid-turn
EXIT_INTERRUPTED = 130  # Ctrl+C / SIGTERM, or another client interrupted the turn

REPORT_WAIT_S = 60.0  # for a subagent's report after its turn ended
_RULE = re.compile(r"^(?P<tool>\*|[A-Za-z0-9_.-]+)(?:\((?P<pattern>.+)\))?$", re.DOTALL)


class UsageError(Exception):
    """A mistake on the command line, reported before anything reaches the daemon."""


@dataclass(frozen=True)
class AllowRule:
    tool: str  # a tool name, or "*" for every tool
    pattern: str | None = None  # None: every call of the tool

    @classmethod
    def parse(cls, text: str) -> AllowRule:
        match = _RULE.match(text.strip())
        if match is None:
            raise UsageError(
                f"--allow {text!r}: a rule is TOOL, TOOL(PATTERN) or * "
                "(e.g. --allow 'shell(git diff*)' --allow write_file)"
            )
        problem = unknown_tool(match["tool"])
        if problem is not None:
            raise UsageError(f"--allow {text!r}: {problem}")
        pattern = match["pattern"]
        if match["tool"] == "shell" and pattern is not None and has_control_operator(pattern):
            raise UsageError(
                f"--allow {text!r}: a shell pattern holding a control operator (; & | ` $( < >) "
                "would never match: allow each command on its own"
            )
        return cls(match["tool"], pattern)

    def allows(self, tool: str, arguments: Mapping[str, object], summary: str) -> bool:
        if self.tool not in ("*", tool):
            return False
        if self.pattern is None:
            return True
        command = arguments.get("command")
        if tool == "shell" and isinstance(command, str):
            return allowed_by([self.pattern], command) is not None
        path = arguments.get("path")
        return pattern_matches(self.pattern, path if isinstance(path, str) else summary)


def first_allowing(rules: Sequence[AllowRule], approval: Mapping[str, object]) -> AllowRule | None:
    """The rule that answers an `approval/requested` with "allow", if any."""
    tool = str(approval.get("tool") or "")
    arguments = approval.get("arguments")
    args = arguments if isinstance(arguments, dict) else {}
    summary = str(approval.get("summary") or "")
    return next((r for r in rules if r.allows(tool, args, summary)), None)


@dataclass
class ExecRequest:
    prompt: str
    cwd: str
    agent: str | None = None
    model: str | None = None
    continue_last: bool = False
    resume: str | None = None
    json: bool = False
    allow: list[AllowRule] = field(default_factory=list)
    # `input/send` image entries (client.images.from_path), checked before anything is sent.
    images: list[JsonObject] = field(default_factory=list)
    # `--cwd` was given: a resumed conversation whose directory is gone is pointed there.
    cwd_given: bool = False


# Session statuses during which more is to come (docs/protocol.md, Session).
ACTIVE = ("running", "awaiting_approval", "waiting")


@dataclass
class TurnFollower:
    """What `exec` prints of one conversation, and when it ends, read off the shared fold of its
    notifications (`ConversationView`, openvaala_server/client/view.py).

    It follows the turn that took its input and, when that turn started subagents, the root
    turns their reports start, until the conversation is quiet: what `spawn_agent` promises
    ("it will report back") is then in the answer. Pure: `feed` takes a notification; the I/O
    is `_follow`'s.
    """

    input_id: str
    view: ConversationView  # from the subscription's snapshot
    out: TextIO
    err: TextIO
    json_lines: bool = False
    turn_id: str | None = None  # the turn that took our input
    turn_ids: set[str] = field(default_factory=set)  # it, and the root turns after it
    # Subagents whose turn ended since ours started: their report to the root is on its way.
    reports_due: set[str] = field(default_factory=set)
    # agent_message items of the root session being streamed, and whether output ended in "\n".
    streaming: set[str] = field(default_factory=set)
    printed_any: bool = False
    at_line_start: bool = True
    status: str | None = None  # of the last root turn followed, once it ended
    error: JsonObject | None = None
    # The root's last retry said, so each is said once.
    _retry: object = field(default=None, init=False, repr=False)

    @property
    def root_session(self) -> str:
        return self.view.root_id

    def status_of(self, session_id: str) -> str | None:
        session = self.view.sessions.get(session_id)
        return session.status if session is not None else None

    @property
    def _active(self) -> bool:
        return any(s.status in ACTIVE for s in self.view.sessions.values())

    @property
    def done(self) -> bool:
        if self.status is None:
            return False
        if self.status != "completed":
            return True
        return not self.reports_due and not self._active

    @property
    def only_reports_due(self) -> bool:
        return self.status == "completed" and bool(self.reports_due) and not self._active

    def write(self, text: str) -> None:
        if not text:
            return
        self.out.write(text)
        self.out.flush()
        self.printed_any = True
        self.at_line_start = text.endswith("\n")

    def feed(self, note: Note | Params) -> None:
        """One notification as the client yields it, or one of exec's own (`exec/ended`)."""
        if self.json_lines:
            params = note.get("params") or {}
            self.out.write(codec.dumps({"method": note.get("method"), "params": params}).decode())
            self.out.write("\n")
            self.out.flush()
        for change in self.view.apply(note):
            if change.session_id == self.root_session:
                self._root_change(change)
            elif isinstance(change, TurnEnded):
                self._subagent_ended(change)
        # A closed subagent reports nothing.
        self.reports_due = {s for s in self.reports_due if self.status_of(s) != "closed"}

    def _root_change(self, change: Change) -> None:
        if isinstance(change, TurnStarted) and self.turn_id is not None:
            self.turn_ids.add(change.turn_id)
            self.status = None  # a report started another root turn: follow it too
        elif isinstance(change, TurnEnded) and change.turn_id in self.turn_ids:
            self.status, self.error = change.status, change.error
        elif isinstance(change, (ItemAdded, ItemUpdated)):
            self._root_item(change.item)
        elif isinstance(change, ItemDelta) and change.item_id in self.streaming:
            if change.field == "text" and not self.json_lines:
                self.write(change.delta)
        elif isinstance(change, StatusChanged):
            self._retrying()

    def _subagent_ended(self, change: TurnEnded) -> None:
        if self.turn_id is not None and change.status in ("completed", "failed", "interrupted"):
            self.reports_due.add(str(change.session_id))

    def _retrying(self) -> None:
        retry = self.view.sessions[self.root_session].retry
        if retry is None or retry is self._retry:
            return
        self._retry = retry
        error = retry.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        self._diag(
            f"retrying {retry.get('attempt')}/{retry.get('maxAttempts')} in "
            f"{retry.get('delaySeconds')} s: {message}"
        )

    def _root_item(self, item: Mapping[str, object]) -> None:
        if item.get("status") == "in_progress":  # `item/started`: streamed from here on
            if item.get("type") == "agent_message" and item.get("turnId") in self.turn_ids:
                self.streaming.add(str(item.get("itemId")))
                self._separate()
            return
        kind = item.get("type")
        if kind == "user_message" and item.get("inputId") == self.input_id:
            self.turn_id = str(item.get("turnId"))
            self.turn_ids.add(self.turn_id)
        elif kind == "user_message" and item.get("fromSessionId"):
            self.reports_due.discard(str(item["fromSessionId"]))
        elif item.get("turnId") not in self.turn_ids:
            return
        elif kind == "agent_message":
            self._message_done(str(item.get("itemId")), str(item.get("text") or ""))
        elif kind == "tool_call":
            self._diag(tool_line(str(item.get("name")), item.get("arguments")))

    def _separate(self) -> None:
        """One blank line between two messages."""
        if self.printed_any and not self.json_lines:
            self.write("\n" if self.at_line_start else "\n\n")

    def _message_done(self, item_id: str, text: str) -> None:
        """A message not seen streaming (e.g. delivered whole) is printed when it completes."""
        if item_id in self.streaming:
            self.streaming.discard(item_id)
            return
        if self.json_lines or not text:
            return
        self._separate()
        self.write(text)

    def _diag(self, text: str) -> None:
        if not self.json_lines:
            print(f"openvaala: {text}", file=self.err)

    def finish_output(self) -> None:
        if self.printed_any and not self.at_line_start:
            self.write("\n")


def read_prompt(argument: str | None, stdin: TextIO) -> str:
    """The prompt argument, or stdin when it is missing or `-`; stdin piped in beside a prompt
    argument is appended to it (`git diff | openvaala exec "review this"`)."""
    if argument is None or argument == "-":
        if stdin.isatty():
            raise UsageError('no prompt: pass one (openvaala exec "…") or pipe it on stdin')
        text = stdin.read()
    elif not stdin.isatty() and _has_data(stdin):
        text = f"{argument}\n\n{stdin.read()}"
    else:
        text = argument
    if not text.strip():
        raise UsageError("the prompt is empty")
    return text


def read_images(paths: Sequence[str]) -> list[JsonObject]:
    """`--image FILE` (repeatable): each file read and checked as `input/send` would (kind from
    its bytes, size, how many), so a mistake exits 2 before a conversation is made or a daemon
    started."""
    from openvaala_server.client import images as client_images
    from openvaala_server.domain.images import MAX_IMAGES_PER_MESSAGE, ImageError

    if len(paths) > MAX_IMAGES_PER_MESSAGE:
        raise UsageError(
            f"--image: at most {MAX_IMAGES_PER_MESSAGE} images go with one message "
            f"({len(paths)} given)"
        )
    try:
        return [client_images.from_path(path) for path in paths]
    except ImageError as exc:
        raise UsageError(f"--image: {exc}") from None


def _has_data(stdin: TextIO) -> bool:
    """Whether stdin is a pipe or file (not a terminal, not /dev/null) a caller filled."""
    import stat

    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or (stat.S_ISREG(mode) and os.fstat(stdin.fileno()).st_size > 0)


def run(request: ExecRequest) -> int:
    from openvaala_server.client.remote_spec import ENV_REMOTE

    # With --remote, the directory is the remote machine's: the remote daemon checks it.
    if not os.environ.get(ENV_REMOTE):
        if not os.path.isdir(request.cwd):
            _err(f"--cwd {request.cwd} does not exist or is not a directory")
            return EXIT_USAGE
        request.cwd = os.path.abspath(request.cwd)
    try:
        return asyncio.run(_run(request))
    except BrokenPipeError:  # the reader went away (`| head`): stop, as other tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the exit's flush does not fail again
        return EXIT_FAILED


# Refusals that mean the command line named something that is not there.
_USAGE_KINDS = ("invalid_params", "not_found", "model_missing", "agent_missing", "cwd_missing")


def _refusal(kind: str, message: str, data: JsonObject) -> str:
    """The daemon's refusal in the words of this command: its options, not protocol methods."""
    names = data.get("available")
    available = ", ".join(str(a) for a in names) if isinstance(names, list) else ""
    if kind == "model_missing":
        return f"model {data.get('model')!r} is not configured: pass --model NAME ({available})"
    if kind == "agent_missing":
        return f"agent {data.get('agent')!r} is not configured: pass --agent NAME ({available})"
    if kind == "cwd_missing":
        return cwd_gone(str(data.get("cwd") or "?"))
    return scrub(message)


def _err(text: str) -> None:
    print(f"openvaala: {text}", file=sys.stderr)


async def _run(request: ExecRequest) -> int:
    from openvaala_server.client import Client, ConnectionLost, RpcError

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    from websockets.exceptions import InvalidHandshake

    try:
        client = await Client.connect(client_name="openvaala-exec", reconnect=False)
    except (RuntimeError, OSError, InvalidHandshake) as exc:  # refused: e.g. it is stopping
        _err(f"cannot reach the daemon: {exc}")
        return EXIT_NO_DAEMON
    if client.dialer is not None:
        request.cwd = client.dialer.resolve(request.cwd)
    try:
        return await _exec(client, request, stop)
    except RpcError as exc:
        _err(_refusal(exc.kind, exc.message, exc.data))
        return EXIT_USAGE if exc.kind in _USAGE_KINDS else EXIT_FAILED
    except IdPrefixError as exc:
        _err(f"--resume: {exc}")
        return EXIT_USAGE
    except UsageError as exc:
        _err(str(exc))
        return EXIT_USAGE
    except ConnectionLost:
        _err("the daemon went away during the turn")
        return EXIT_NO_DAEMON
    finally:
        await client.close()


async def _exec(client: Client, request: ExecRequest, stop: asyncio.Event) -> int:
    from openvaala_server.client import RpcError

    warning = config_warning(client.server_info.get("config"))
    if warning:
        _err(warning)
    cid, existing = await _conversation(client, request)
    subscribed = await client.subscribe(cid)
    snapshot, seq = subscribed["snapshot"], subscribed["seq"]
    info: Mapping[str, object] = snapshot["conversation"] if snapshot else {}
    if existing and info.get("cwdExists") is False:
        await _repoint(client, cid, str(info.get("cwd")), request)
    previous_agent = str(info.get("agent") or "")
    try:
        if existing and request.agent:
            await client.request(
                methods.CONVERSATION_SET_AGENT, {"conversationId": cid, "agent": request.agent}
            )
        if existing and request.model:
            await client.request(
                methods.CONVERSATION_SET_MODEL, {"conversationId": cid, "model": request.model}
            )
        params: payloads.SendParams = {
            "conversationId": cid,
            "text": await _expanded(client, cid, request.prompt),
            "mode": "queue",
        }
        if request.images:
            params["images"] = request.images
        sent = await client.request(methods.INPUT_SEND, params)
    except RpcError:
        # Nothing ran: the conversation keeps the agent it had (docs/design.md, "openvaala exec").
        if existing and request.agent and previous_agent and request.agent != previous_agent:
            change = {"conversationId": cid, "agent": previous_agent}
            await _quietly(client.request(methods.CONVERSATION_SET_AGENT, change))
        raise
    follower = TurnFollower(
        input_id=str(sent["inputId"]),
        view=ConversationView.from_snapshot(snapshot or {}, seq, local_notices=False),
        out=sys.stdout,
        err=sys.stderr,
        json_lines=request.json,
    )
    code = await _follow(client, cid, follower, request.allow, stop)
    follower.finish_output()
    if request.json:  # the last line says how it ended, whatever the reason
        follower.feed({"method": "exec/ended", "params": {"conversationId": cid, "exitCode": code}})
    # Over `--remote` the conversation is the remote daemon's: so is the way to go on.
    there = f"--remote {client.dialer.remote.destination} " if client.dialer is not None else ""
    _err(f'conversation {cid} (go on: openvaala exec {there}--resume {cid} "…")')
    return code


async def _expanded(client: Client, cid: str, prompt: str) -> str:
    """`/name args`: the custom command's prompt, expanded by the daemon (docs/protocol.md,
    commands/expand); an unknown name is refused there (exit 2)."""
    call = slash_call(prompt)
    if call is None:
        return prompt
    name, arguments = call
    change: payloads.ExpandParams = {"conversationId": cid, "name": name, "arguments": arguments}
    result = await client.request(methods.COMMANDS_EXPAND, change)
    return str(result["text"])


async def _repoint(client: Client, cid: str, gone: str, request: ExecRequest) -> None:
    """A resumed conversation whose directory is gone works in `--cwd` from now on."""
    if not request.cwd_given:
        raise UsageError(cwd_gone(gone))
    change: payloads.SetCwdParams = {"conversationId": cid, "cwd": request.cwd}
    await client.request(methods.CONVERSATION_SET_CWD, change)
    _err(f"the conversation's directory {gone} is gone: it works in {request.cwd} now (--cwd)")


async def _conversation(client: Client, request: ExecRequest) -> tuple[str, bool]:
    """The conversation's id, and whether it existed before."""
    if request.resume:
        from openvaala_server.client.conversation_ids import resolve

        return await resolve(client, request.resume), True
    if request.continue_last:
        here = {request.cwd, await asyncio.to_thread(os.path.realpath, request.cwd)}
        last = await _last_in(client, here)
        if last is not None:
            return last, True
        _err(f"no earlier conversation in {request.cwd}: starting a new one")
    params: payloads.CreateParams = {"cwd": request.cwd}
    if request.agent:
        params["agent"] = request.agent
    if request.model:
        params["model"] = request.model
    result = await client.request(methods.CONVERSATION_CREATE, params)
    return str(result["conversation"]["conversationId"]), False


async def _last_in(client: Client, here: set[str]) -> str | None:
    """The conversation last active in the directory `here` names (the list is newest first),
    as the TUI's --continue finds it."""
    params: payloads.ListParams = {"archived": False, "limit": 200}
    for _ in range(10):
        result = await client.request(methods.CONVERSATION_LIST, params)
        for conv in result.get("conversations") or []:
            if conv.get("cwd") in here:
                return str(conv["conversationId"])
        if not result.get("nextCursor"):
            return None
        params["cursor"] = result["nextCursor"]
    return None


async def _follow(
    client: Client,
    cid: str,
    follower: TurnFollower,
    rules: Sequence[AllowRule],
    stop: asyncio.Event,
) -> int:
    refused: str | None = None
    refused_in: str | None = None  # the session whose approval was refused
    notes = client.notifications().__aiter__()
    stopping = asyncio.ensure_future(stop.wait())
    try:
        while not follower.done:
            nxt = asyncio.ensure_future(notes.__anext__())
            # A report that never comes (dropped by the daemon) must not hang a script.
            wait = REPORT_WAIT_S if follower.only_reports_due else None
            done, _ = await asyncio.wait(
                {nxt, stopping}, timeout=wait, return_when=asyncio.FIRST_COMPLETED
            )
            if not done:
                nxt.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await nxt
                _err("a subagent's report did not arrive: ending here")
                break
            if nxt not in done:
                nxt.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await nxt
                if follower.turn_id is None:  # still waiting behind another turn: take it back
                    await _quietly(
                        client.request(methods.INPUT_WITHDRAW, {"inputId": follower.input_id})
                    )
                else:
                    await _interrupt(client, cid)
                _err("interrupted")
                return EXIT_INTERRUPTED
            try:
                note = nxt.result()
            except StopAsyncIteration:
                _err("the daemon went away during the turn")
                return EXIT_NO_DAEMON
            follower.feed(note)
            params = note.get("params") or {}
            if note.get("method") == methods.APPROVAL_REQUESTED and refused is None:
                refused = await _answer(client, cid, params, rules)
                refused_in = str(params.get("sessionId")) if refused else None
            if refused_in is not None and follower.status_of(refused_in) not in (
                *ACTIVE,
                None,
            ):
                break  # the session that asked has stopped: the call failed
    finally:
        stopping.cancel()
    if refused is not None:
        _err(
            f"the agent asked to run {refused}, which no --allow rule grants: the turn was "
            "stopped (allow it with e.g. --allow 'shell(git status*)' or --allow write_file)"
        )
        return EXIT_APPROVAL
    if follower.status == "completed":
        return EXIT_OK
    if follower.status == "interrupted":
        _err("the turn was interrupted")
        return EXIT_INTERRUPTED
    error = follower.error or {}
    _err(f"the turn failed: {scrub(str(error.get('message') or follower.status))}")
    return EXIT_FAILED


async def _answer(
    client: Client, cid: str, approval: Mapping[str, object], rules: Sequence[AllowRule]
) -> str | None:
    """Allow a call an `--allow` rule grants; otherwise stop the turn and say what was asked."""
    rule = first_allowing(rules, approval)
    if rule is not None:
        await client.request(
            methods.APPROVAL_RESPOND,
            {"conversationId": cid, "approvalId": approval["approvalId"], "decision": "allow"},
        )
        return None
    asking = approval.get("sessionId")  # the root's or a subagent's turn: it is stopped
    await _interrupt(client, cid, asking if isinstance(asking, str) else None)
    return f"`{approval.get('summary')}` ({approval.get('tool')})"


async def _interrupt(client: Client, cid: str, session_id: str | None = None) -> None:
    params = {"conversationId": cid, **({"sessionId": session_id} if session_id else {})}
    await _quietly(client.request(methods.TURN_INTERRUPT, params, timeout=10))


async def _quietly(call: Awaitable[object]) -> None:
    """A request made on the way out: its failure changes nothing about the exit status."""
    from openvaala_server.client import ConnectionLost, RpcError

    with contextlib.suppress(RpcError, ConnectionLost, TimeoutError):
        await call
