"""The approval board without a daemon: what clients are sent, the first answer winning, and
interrupts resolving a question as denied."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openvaala_server import errors
from openvaala_server.domain.approvals import Grant, GrantOffer, NoGrant
from openvaala_server.runtime.approvals import ApprovalBoard, Response
from openvaala_server.runtime.hub import Hub
from openvaala_server.tools.base import access_of
from openvaala_server.tools.files import WriteFileTool
from openvaala_server.tools.shell import ShellTool
from tests.support.errors import error_data

SID = "s" * 32


class Frames:
    """A hub subscriber keeping what it was sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def deliver(self, frame: str) -> None:
        self.sent.append(json.loads(frame))

    def methods(self) -> list[str]:
        return [f["method"] for f in self.sent]


LS = GrantOffer((Grant("shell", "command", "ls"),), "shell: exactly the command `ls`; nothing else")


def _board() -> tuple[ApprovalBoard, Frames]:
    hub = Hub("c" * 32)
    frames = Frames()
    hub.subscribe(frames)
    return ApprovalBoard(hub), frames


async def test_the_first_answer_wins_and_every_client_hears_it() -> None:
    board, frames = _board()
    pending = board.ask(SID, "worker", "shell", "ls", {"command": "ls"}, "always asks", LS)
    [asked] = frames.sent
    assert asked["method"] == "approval/requested"
    assert asked["params"] == board.pending()[0]
    assert asked["params"]["agent"] == "worker" and asked["params"]["sessionId"] == SID
    board.resolve(pending.approval_id, "deny", "not now")
    assert pending.answer.result() == Response("deny", "not now")
    assert frames.sent[-1]["method"] == "approval/resolved"
    assert frames.sent[-1]["params"]["message"] == "not now"
    assert board.pending() == []
    with pytest.raises(errors.AlreadyResolved) as again:
        board.resolve(pending.approval_id, "allow")
    assert error_data(again.value)["decision"] == "deny"
    with pytest.raises(errors.NotFound):
        board.resolve("f" * 32, "allow")
    assert frames.methods() == ["approval/requested", "approval/resolved"]


async def test_allow_for_the_conversation_of_what_cannot_be_granted_says_it_allowed_once() -> None:
    board, frames = _board()
    no = NoGrant("the command uses a shell operator")
    pending = board.ask(SID, "default", "shell", "echo one > a", {}, "always asks", no)
    assert frames.sent[0]["params"]["grantScope"] is None
    assert frames.sent[0]["params"]["noGrantReason"] == no.reason
    answer = board.resolve(pending.approval_id, "allow_conversation")
    assert answer["decision"] == "allow" and "shell operator" in answer["notGranted"]
    assert pending.answer.result() == Response("allow", None)
    resolved = frames.sent[-1]["params"]
    assert resolved["decision"] == "allow" and resolved["notGranted"] == answer["notGranted"]


async def test_an_interrupt_resolves_it_denied_once() -> None:
    board, frames = _board()
    pending = board.ask(SID, "default", "shell", "ls", {"command": "ls"}, "why", LS)
    pending.answer.cancel()  # the turn awaiting it was cancelled
    board.cancel(pending, "The user interrupted the turn.")
    board.cancel(pending, "twice")  # already resolved: nothing more is sent
    resolved = [f["params"] for f in frames.sent if f["method"] == "approval/resolved"]
    assert [(r["decision"], r["message"]) for r in resolved] == [
        ("deny", "The user interrupted the turn.")
    ]


def test_the_built_in_tools_say_what_a_call_would_do(tmp_path: Path) -> None:
    shell = access_of(
        ShellTool(), {"command": "make", "outside_sandbox": True, "justification": "net"}, tmp_path
    )
    assert shell is not None
    assert shell.command == "make" and shell.outside_sandbox == "net"
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    write = access_of(WriteFileTool(), {"path": "link/a.txt", "content": ""}, tmp_path)
    assert write is not None and write.writes == ((tmp_path / "real" / "a.txt").resolve(),)
