"""Subagent service pieces that need no daemon: which tools an agent gets, the model a subagent
uses, argument checks, and the text of a report."""

from __future__ import annotations

import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from openvaala_server.config import parse_config
from openvaala_server.domain.records import ErrorInfo, Item
from openvaala_server.domain.usage import UsageTracker
from openvaala_server.runtime.session import LiveSession, LiveTurn
from openvaala_server.runtime.subagent_reports import last_answer, report_text
from openvaala_server.runtime.subagents import SubagentService
from openvaala_server.tools.base import ToolContext
from openvaala_server.tools.collab import COLLAB_TOOL_NAMES

CONFIG = """
[agents.default]
description = "root"
model = "demo"

[agents.helper]
description = "helps"

[agents.solo]
description = "no subagents"
tools = ["shell"]

[agents.waiter]
description = "may only wait"
tools = ["wait", "list_agents"]
"""


def _service(tmp_path: Path) -> SubagentService:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    config = parse_config(tomllib.loads(CONFIG), path)
    return SubagentService(SimpleNamespace(config=config, shutting_down=False))


def _session(agent: str = "default", model: str = "demo") -> LiveSession:
    return LiveSession("s" * 32, None, agent, model, "t", UsageTracker(1000, 100))


def _item(kind: str, turn: str | None, text: str = "") -> Item:
    return {"itemId": kind + str(turn), "type": kind, "turnId": turn, "text": text}


def test_collaboration_tools_follow_the_agents_tool_list(tmp_path: Path) -> None:
    service = _service(tmp_path)
    conv: Any = object()
    assert list(service.tools_for(conv, _session("default"))) == list(COLLAB_TOOL_NAMES)
    assert service.tools_for(conv, _session("solo")) == {}
    assert sorted(service.tools_for(conv, _session("waiter"))) == ["list_agents", "wait"]


def test_a_subagent_uses_its_agents_model_only_when_configured(tmp_path: Path) -> None:
    service = _service(tmp_path)
    parent = _session("default", model="bigger")
    assert service.child_model(parent, "helper") == "bigger"  # helper names no model
    assert service.child_model(parent, "default") == "demo"  # default names one


async def test_bad_arguments_are_tool_errors(tmp_path: Path) -> None:
    service = _service(tmp_path)
    tools = service.tools_for(object(), _session())  # type: ignore[arg-type]
    ctx = ToolContext(cwd=tmp_path, emit_output=lambda _: None)
    cases: list[tuple[str, dict[str, Any]]] = [
        ("spawn_agent", {"agent": "helper"}),
        ("spawn_agent", {"agent": "helper", "task": "x", "history": "some"}),
        ("spawn_agent", {"agent": "helper", "task": "x", "history": -2}),
        ("wait", {"agent_ids": "abc"}),
        ("wait", {"timeout_s": "soon"}),
        ("wait", {"until": "never"}),
        ("send_message", {"agent_id": "x"}),
        ("inspect_agent", {"agent_id": "x", "items": "many"}),
    ]
    for name, args in cases:
        result = await tools[name].run(args, ctx)
        assert result.is_error, (name, args)


def test_last_answer_is_from_the_last_finished_turn_only() -> None:
    session = _session()
    session.items = [_item("user_message", None, "copied"), _item("user_message", "t1", "q")]
    assert last_answer(session) is None
    session.items += [_item("agent_message", "t1", "first"), _item("tool_call", "t1")]
    assert last_answer(session) == "first"
    session.items += [_item("user_message", "t2", "again"), _item("notice", "t2", "failed")]
    assert last_answer(session) is None  # t2 said nothing: t1's answer is not t2's
    session.items.append(_item("agent_message", "t3", "running"))
    session.turn = LiveTurn("t3")
    assert last_answer(session) is None


@pytest.mark.parametrize(
    ("status", "error", "answer", "expected"),
    [
        ("completed", None, "done it", ["ended: completed", "Its answer:\ndone it"]),
        ("failed", {"kind": "auth", "message": "bad key"}, None, ["Error (auth): bad key"]),
        ("interrupted", None, None, ["no answer"]),
    ],
)
def test_report_text(
    status: str, error: ErrorInfo | None, answer: str | None, expected: list[str]
) -> None:
    text = report_text(_session("helper"), status, error, answer)
    assert text.startswith("[Report from subagent " + "s" * 32)
    assert all(part in text for part in expected)


def test_history_copies_what_the_parents_model_sees_in_whole_steps(tmp_path: Path) -> None:
    service = _service(tmp_path)
    parent = _session()
    old = _item("user_message", "t1", "old question")
    old_answer = _item("agent_message", "t1", "old answer")
    summary: Item = {**_item("summary", "t2", "SUMMARY"), "coversUpTo": old_answer["itemId"]}
    summary["status"] = "completed"
    ask = _item("user_message", "t3", "run it")
    call: Item = {**_item("tool_call", "t3"), "callId": "c1"}
    result: Item = {**_item("tool_result", "t3"), "callId": "c1"}
    answer = _item("agent_message", "t3", "done")
    parent.items = [old, old_answer, ask, call, result, answer, summary]
    copies = service._history_copy(parent, "all")
    assert [c["text"] for c in copies][:1] == ["SUMMARY"]
    assert "old question" not in [c.get("text") for c in copies]
    assert "coversUpTo" not in copies[0]  # in the child it stands for everything before it
    # The last 2 items would split a tool call from its result: whole steps only.
    last_two = service._history_copy(parent, 2)
    assert [c["type"] for c in last_two] == ["agent_message"]
