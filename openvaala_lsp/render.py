"""A transcript as Markdown, with the lines code lenses attach to. Pure: view in, text out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from openvaala_lsp.toolbox import change_heading, changes_of, plan_lines
from openvaala_lsp.usage import report
from openvaala_server.client.notice_words import notice_text
from openvaala_server.client.view import ConversationView, Item, SessionView
from openvaala_server.protocol import codec
from openvaala_server.protocol.json_types import JsonObject

AnchorKind = Literal["user_message", "subagent", "approval"]


@dataclass(frozen=True)
class Anchor:
    line: int
    kind: AnchorKind
    conversation_id: str
    item_id: str | None = None  # user_message: the message (rewind target)
    fork_up_to: str | None = None  # user_message: the last finished item of its exchange
    session_id: str | None = None  # subagent: the session to follow
    approval_id: str | None = None  # approval: the request its lenses answer
    grant_scope: str | None = None  # approval: what "allow for this conversation" allows


@dataclass
class Rendered:
    text: str
    anchors: list[Anchor] = field(default_factory=list)


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    @property
    def line(self) -> int:
        return len(self.lines)

    def add(self, *lines: str) -> None:
        for line in lines:
            self.lines.extend(line.split("\n"))

    def block(self, text: str, lang: str = "") -> None:
        fence = "````" if "```" in text else "```"
        self.add(f"{fence}{lang}", text.rstrip("\n"), fence, "")


def render(view: ConversationView, session_id: str | None = None) -> Rendered:
    """The root agent's transcript, or one subagent's (`session_id`)."""
    root_id = view.root_id
    sid = session_id or root_id
    session = view.sessions.get(sid)
    cid = view.conversation_id
    out = _Writer()
    anchors: list[Anchor] = []
    conv = view.conversation
    title = str(conv.get("title") or "Conversation")
    if session is None:
        out.add(f"# {title}", "", f"_No session {sid} in this conversation._")
        return Rendered("\n".join(out.lines) + "\n")
    is_root = sid == root_id
    heading = title if is_root else f"{title} › {session.info.get('agent', 'agent')} (subagent)"
    out.add(f"# {heading}", "")
    # The header holds what a turn does not change; status and usage, which change all the time
    # while a reply streams, are in the footer, next to the reply (docs/editors.md).
    parent = view.sessions.get(session.parent_id or "")
    out.add(
        f"> agent **{session.info.get('agent', '?')}** · model `{session.info.get('model', '?')}`"
        + ("" if is_root else f" · session `{sid}`")
    )
    if not is_root:
        out.add(f"> subagent of **{_agent(parent)}**")
    out.add(f"> `{conv.get('cwd', '')}`", "")
    out.add(*_missing(conv))
    if view.deleted:
        out.add("_This conversation was deleted._", "")
    if session.has_more:
        out.add("_Older messages are not shown here._", "")
    anchors.extend(_items(out, view, session, forkable=is_root))
    anchors.extend(_approvals(out, view, sid, everyone=is_root))
    out.add(*plan_lines(session.plan))
    if session.inbox:
        out.add("## Waiting", "")
        for entry in session.inbox:
            out.add(f"- ({entry.get('mode', 'queue')}) {_one_line(str(entry.get('text', '')))}")
        out.add("")
    children = view.children(sid)
    if children:
        out.add("## Subagents", "")
        for child in children:
            anchors.append(Anchor(out.line, "subagent", cid, session_id=child.session_id))
            label = child.info.get("title") or ""
            out.add(
                f"### ↳ {child.info.get('agent', 'agent')} — {_status(child.info.get('status'))}"
                + (f" · {_one_line(str(label))}" if label else ""),
                "",
            )
    if out.lines and out.lines[-1] != "":
        out.add("")  # `---` right under a paragraph would make it a heading
    out.add(*_footer(cid, session))
    return Rendered("\n".join(out.lines).rstrip("\n") + "\n", anchors)


def _footer(cid: str, session: SessionView) -> list[str]:
    """The agent's status and its own context usage: the transcript's last line."""
    status = "compacting" if session.compacting else _status(session.info.get("status"))
    line = f"> **{status}**"
    if session.usage:
        line += f" · context {report(cid, session.session_id, session.usage)['text']}"
    return ["---", "", line]


def _agent(session: SessionView | None) -> str:
    return str(session.info.get("agent") or "agent") if session is not None else "agent"


def _who(view: ConversationView, session: SessionView, item: Item, first: bool) -> str:
    """Who wrote a user message: the user, a subagent reporting back, or (in a subagent's own
    transcript) the parent agent that gave it its task or a later message."""
    if item.get("origin", "user") != "user":
        return "Subagent report"
    sender = item.get("fromSessionId")
    if isinstance(sender, str) and sender and sender != session.session_id:
        name = _agent(view.sessions.get(sender))
        return f"{'Task' if first else 'Message'} from {name} (parent agent)"
    if item.get("copiedFrom"):
        return "You (from the parent's history)"
    return "You"


def _missing(conv: JsonObject) -> list[str]:
    """Warnings for a conversation that cannot run here (moved, or its config edited), each
    naming the command that fixes it; the daemon refuses input until then."""
    lines: list[str] = []
    if conv.get("agentAvailable") is False:
        lines.append(
            f"> ⚠ agent **{conv.get('agent', '?')}** is not configured here: choose another"
            " with `openvaala.setAgent` (`:OpenVaalaAgent`, or OpenVaala: Change Agent…)"
        )
    if conv.get("cwdExists") is False:
        lines.append(
            "> ⚠ the working directory does not exist: point the conversation elsewhere"
            " with `openvaala.setCwd` (`:OpenVaalaCwd`, or OpenVaala: Change Working Directory…)"
        )
    return [*lines, ""] if lines else []


def _items(
    out: _Writer, view: ConversationView, session: SessionView, *, forkable: bool
) -> list[Anchor]:
    anchors: list[Anchor] = []
    cid = view.conversation_id
    items = session.items
    tasked = False  # the parent's first message to a subagent is its task
    starts = [i for i, it in enumerate(items) if it.get("type") == "user_message"]
    for index, item in enumerate(items):
        kind = item.get("type")
        text = str(item.get("text") or "")
        if kind == "user_message":
            if forkable and item.get("origin", "user") == "user":
                anchors.append(
                    Anchor(
                        out.line,
                        "user_message",
                        cid,
                        item_id=str(item.get("itemId")),
                        fork_up_to=_exchange_end(items, index, starts),
                    )
                )
            who = _who(view, session, item, first=not tasked)
            tasked = tasked or who.startswith("Task from")
            out.add(f"## {who}", "", _no_headings(text), "")
        elif kind == "agent_message":
            out.add("## Assistant", "", text + _status_mark(item), "")
        elif kind == "reasoning":
            quoted = "\n".join("> " + line for line in text.splitlines() or [""])
            out.add("> _thinking_", quoted + _status_mark(item), "")
        elif kind == "tool_call":
            args = item.get("arguments")
            shown = codec.text(args) if args else item.get("argumentsText", "")
            out.add(f"**⚙ {item.get('name', 'tool')}** `{_one_line(str(shown))}`", "")
        elif kind == "tool_result" and changes_of(item):
            for change in changes_of(item):  # the files it changed, as diffs
                out.add(change_heading(change))
                out.block(str(change.get("diff") or ""), "diff")
        elif kind == "tool_result":
            out.block(str(item.get("output") or ""), "text")
            if item.get("isError"):
                out.add("_the tool reported an error_", "")
        elif kind == "summary":
            out.add("## Summary of the earlier conversation", "", text, "")
        elif kind == "notice":
            out.add(f"_{_one_line(notice_text(item))}_", "")
    return anchors


def _approvals(out: _Writer, view: ConversationView, sid: str, *, everyone: bool) -> list[Anchor]:
    """Pending approvals: the session's own, and in the root transcript its subagents' too
    (the user reads the root transcript; a subagent waiting there would go unseen)."""
    waiting = [a for a in view.approvals.values() if everyone or a.session_id == sid]
    if not waiting:
        return []
    anchors: list[Anchor] = []
    out.add("## Awaiting approval", "")
    for request in waiting:
        aid = request.approval_id
        anchors.append(
            Anchor(
                out.line,
                "approval",
                view.conversation_id,
                approval_id=aid,
                grant_scope=request.grant_scope,
            )
        )
        summary = _one_line(request.summary)
        agent, tool = request.agent or "agent", request.wire.get("tool") or "a tool"
        out.add(f"### ⚠ {agent} wants to use {tool}", "")
        if summary:
            out.block(summary, "text")
        if reason := _one_line(request.reason):
            out.add(f"_{reason}_", "")
        out.add(_one_line(request.grant_text()), "")
    return anchors


def _status(status: object) -> str:
    return "awaiting approval" if status == "awaiting_approval" else str(status or "idle")


def _exchange_end(items: list[Item], index: int, starts: list[int]) -> str:
    """The last finished item from this user message up to the next one."""
    following = [s for s in starts if s > index]
    end = following[0] if following else len(items)
    for item in reversed(items[index:end]):
        if item.get("status") != "in_progress":
            return str(item.get("itemId"))
    return str(items[index].get("itemId"))


def _status_mark(item: Item) -> str:
    status = item.get("status")
    if status == "in_progress":
        return " …"
    if status in ("interrupted", "failed"):
        return f" _[{status}]_"
    return ""


def _one_line(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _no_headings(text: str) -> str:
    """User text as it was, except that a line that would read as a heading (`## Assistant`) is
    escaped: the transcript's own headings are the only ones (code blocks are left alone)."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        stripped = line.lstrip()
        marker = stripped[:3]
        if marker in ("```", "~~~"):
            if fence is None:
                fence = marker
            elif marker == fence:
                fence = None
        elif fence is None and stripped.startswith("#") and len(line) - len(stripped) < 4:
            line = line[: len(line) - len(stripped)] + "\\" + stripped
        out.append(line)
    return "\n".join(out)
