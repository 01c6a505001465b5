"""Subagents through the real daemon: spawn_agent, reports, the collaboration tools, clients
following and steering every session, and restart. One fake provider scripts the root agent and
its subagents; requests are told apart by the agent's instructions (`ROLE: ...`) and the task."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider, RecordedRequest
from tests.fakes.script import Gate, Reply
from tests.support.daemon import Daemon
from tests.support.events import Note, collect_until, new_conversation
from tests.support.roles import role
from tests.support.waits import WAIT_S

REPORT = "[Report from subagent"


def _config(fake: FakeProvider, subagents: str = "") -> str:
    return (
        fake.config_toml("main")
        + fake.config_toml("other", model="other-model")
        + '\n[agents.default]\ndescription = "root agent"\nmodel = "main"\n'
        + 'instructions = "ROLE: root"\n'
        # No model of its own: a worker uses its parent's.
        + '\n[agents.worker]\ndescription = "Explores code"\ninstructions = "ROLE: worker"\n'
        + '\n[agents.reviewer]\ndescription = "Reviews changes"\nmodel = "other"\n'
        + 'instructions = "ROLE: reviewer"\n'
        + "\n[retry]\nbase_delay_s = 0.01\nmax_delay_s = 0.05\n"
        + (f"\n[subagents]\n{subagents}\n" if subagents else "")
    )


# -- reading requests -----------------------------------------------------------------------


def users(req: RecordedRequest) -> list[str]:
    return [str(m["content"]) for m in req.json["messages"] if m["role"] == "user"]


def assistants(req: RecordedRequest) -> list[str]:
    return [str(m["content"]) for m in req.json["messages"] if m["role"] == "assistant"]


def tool_outputs(req: RecordedRequest) -> list[str]:
    return [str(m["content"]) for m in req.json["messages"] if m["role"] == "tool"]


def has(text: str, *, who: str | None = None) -> Callable[[RecordedRequest], bool]:
    """A request of agent `who` (any if None) with a user message containing `text`."""
    return lambda q: (who is None or role(q) == who) and any(text in u for u in users(q))


def first_is(text: str) -> Callable[[RecordedRequest], bool]:
    """A subagent's request by its task: the first user message."""
    return lambda q: users(q)[:1] == [text]


async def until(check: Callable[[], bool], timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def is_root(q: RecordedRequest) -> bool:
    return role(q) == "root"


def spawned(req: RecordedRequest) -> list[str]:
    """The agent_ids spawn_agent returned, as the model sees them in this request."""
    ids = []
    for output in tool_outputs(req):
        try:
            value = json.loads(output)
        except ValueError:
            continue
        if isinstance(value, dict) and "agent_id" in value and "model" in value:
            ids.append(value["agent_id"])
    return ids


def dynamic(
    fake: FakeProvider,
    when: Callable[[RecordedRequest], bool],
    build: Callable[[RecordedRequest], Reply],
) -> None:
    """A reply written from the request it answers (e.g. to use a subagent's id)."""
    reply = Reply()

    def match(req: RecordedRequest) -> bool:
        if not when(req):
            return False
        reply.steps.extend(build(req).steps)
        return True

    fake.enqueue(reply, when=match)


def requests_of(fake: FakeProvider, who: str) -> list[RecordedRequest]:
    return [q for q in fake.requests if role(q) == who]


# -- driving the daemon ---------------------------------------------------------------------


async def _start(
    daemon_factory: Any, fake: FakeProvider, subagents: str = ""
) -> tuple[Daemon, Client, str, str]:
    d: Daemon = daemon_factory(config=_config(fake, subagents))
    client = await d.client()
    created = await client.request("conversation/create", {"cwd": str(d.workdir)})
    cid = created["conversation"]["conversationId"]
    await client.subscribe(cid)
    return d, client, cid, created["conversation"]["rootSessionId"]


async def _send(
    client: Client, cid: str, text: str, mode: str = "queue", sid: str | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"conversationId": cid, "text": text, "mode": mode}
    if sid:
        params["sessionId"] = sid
    result: dict[str, Any] = await client.request("input/send", params)
    return result


def ended(sid: str, status: str | None = None) -> Callable[[Note], bool]:
    return lambda n: (
        n["method"] == "turn/ended"
        and n["params"]["sessionId"] == sid
        and (status is None or n["params"]["status"] == status)
    )


def item_in(sid: str, text: str, kind: str = "user_message") -> Callable[[Note], bool]:
    def stop(n: Note) -> bool:
        if n["method"] != "item/completed" or n["params"]["sessionId"] != sid:
            return False
        item = n["params"]["item"]
        return bool(item["type"] == kind and text in str(item.get("text", "")))

    return stop


def started_sessions(notes: list[Note]) -> list[dict[str, Any]]:
    return [n["params"]["session"] for n in notes if n["method"] == "session/started"]


async def _sessions(client: Client, cid: str) -> dict[str, Any]:
    listed = await client.request("sessions/list", {"conversationId": cid})
    return {s["sessionId"]: s for s in listed["sessions"]}


async def _drain(client: Client, quiet: float = 0.3) -> list[Note]:
    notes: list[Note] = []
    while True:
        try:
            notes.append(cast("Note", await client.next_notification(timeout=quiet)))
        except TimeoutError:
            return notes


# -- tests ----------------------------------------------------------------------------------


async def test_two_subagents_run_in_parallel_and_report_after_each_turn(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d, client, cid, root = await _start(daemon_factory, fake_openai)
    watcher = await d.client("watcher")
    await watcher.subscribe(cid)
    gate_a, gate_b = Gate(), Gate()
    fake_openai.enqueue(
        Reply()
        .tool_call("spawn_agent", {"agent": "worker", "task": "TASK-A explore src"})
        .tool_call("spawn_agent", {"agent": "reviewer", "task": "TASK-B review"}),
        Reply().text("spawned both"),
        when=is_root,
    )
    fake_openai.enqueue(Reply().wait(gate_a).text("answer A"), when=has("TASK-A", who="worker"))
    fake_openai.enqueue(Reply().wait(gate_b).text("answer B"), when=has("TASK-B", who="reviewer"))
    fake_openai.enqueue(Reply().text("noted A"), when=has("answer A", who="root"))
    fake_openai.enqueue(Reply().text("noted B"), when=has("answer B", who="root"))
    await _send(client, cid, "split the work")
    # Both subagents are in their model call at once, while the root has already answered.
    assert await gate_a.wait_reached() and await gate_b.wait_reached()
    notes = await collect_until(client, ended(root))
    children = started_sessions(notes)
    assert [c["agent"] for c in children] == ["worker", "reviewer"]
    assert all(c["parentSessionId"] == root and c["depth"] == 1 for c in children)
    a, b = (c["sessionId"] for c in children)
    # The worker configures no model: it uses its parent's; the reviewer uses its own.
    assert [c["model"] for c in children] == ["main", "other"]
    # The root sees spawn_agent (listing the agents with their descriptions) and the
    # collaboration tools.
    tools = {t["function"]["name"]: t["function"] for t in fake_openai.requests[0].json["tools"]}
    assert {
        "spawn_agent",
        "send_message",
        "wait",
        "interrupt_agent",
        "inspect_agent",
        "list_agents",
        "close_agent",
    } <= set(tools)
    assert "- worker: Explores code" in tools["spawn_agent"]["description"]
    assert tools["spawn_agent"]["parameters"]["properties"]["agent"]["enum"] == [
        "default",
        "worker",
        "reviewer",
    ]
    [req_a] = [q for q in fake_openai.requests if role(q) == "worker"]
    [req_b] = [q for q in fake_openai.requests if role(q) == "reviewer"]
    assert req_a.json["model"] == "fake-model" and req_b.json["model"] == "other-model"
    # Only the task: nothing of the parent's conversation.
    assert users(req_a) == ["TASK-A explore src"] and assistants(req_a) == []

    gate_a.open()
    notes = await collect_until(client, item_in(root, "answer A"))
    report = notes[-1]["params"]["item"]
    assert report["origin"] == "subagent" and report["fromSessionId"] == a
    assert "completed" in report["text"]
    await collect_until(client, ended(root))
    [reported_a] = [q for q in requests_of(fake_openai, "root") if has("answer A")(q)]
    assert REPORT in users(reported_a)[-1]

    gate_b.open()
    await collect_until(client, item_in(root, "answer B"))
    await collect_until(client, ended(root))
    last = requests_of(fake_openai, "root")[-1]
    assert "answer B" in users(last)[-1] and any("answer A" in u for u in users(last))

    # A second client saw every session's events live, each tagged with its session.
    seen = await _drain(watcher)
    assert {s["sessionId"] for s in started_sessions(seen)} == {a, b}
    tagged = [n for n in seen if n["method"] in ("turn/started", "turn/ended", "item/completed")]
    assert all("sessionId" in n["params"] for n in tagged)
    assert {n["params"]["sessionId"] for n in tagged} == {root, a, b}
    assert any(n["method"] == "item/delta" and n["params"]["sessionId"] == a for n in seen)
    sessions = await _sessions(client, cid)
    assert sessions[a]["parentSessionId"] == root and sessions[a]["status"] == "idle"
    assert sessions[b]["parentSessionId"] == root and sessions[root]["parentSessionId"] is None
    # Each subagent keeps its own history, readable by session.
    read = await client.request("conversation/read", {"conversationId": cid, "sessionId": b})
    assert [i["type"] for i in read["items"]] == ["user_message", "agent_message"]
    assert read["items"][0]["fromSessionId"] == root
    await client.close()
    await watcher.close()


async def test_history_copies_the_finished_history_and_not_the_running_turn(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid, root = await _start(daemon_factory, fake_openai)
    fake_openai.default_reply = Reply().text("ack")
    fake_openai.enqueue(Reply().text("first answer"), when=has("first question", who="root"))
    fake_openai.enqueue(
        Reply()
        .tool_call("spawn_agent", {"agent": "worker", "task": "WITH-HISTORY", "history": "all"})
        .tool_call("spawn_agent", {"agent": "worker", "task": "NO-HISTORY"})
        .tool_call("spawn_agent", {"agent": "worker", "task": "LAST-ONE", "history": 1}),
        Reply().text("spawned"),
        when=has("second question", who="root"),
    )
    await _send(client, cid, "first question")
    await collect_until(client, ended(root))
    await _send(client, cid, "second question")
    await collect_until(client, ended(root))
    await until(lambda: len(requests_of(fake_openai, "worker")) == 3)
    workers = {users(q)[-1]: q for q in requests_of(fake_openai, "worker")}
    with_history = workers["WITH-HISTORY"]
    assert users(with_history) == ["first question", "WITH-HISTORY"]
    assert assistants(with_history) == ["first answer"]
    assert "second question" not in json.dumps(with_history.json)
    assert users(workers["NO-HISTORY"]) == ["NO-HISTORY"]
    assert assistants(workers["NO-HISTORY"]) == []
    assert users(workers["LAST-ONE"]) == ["LAST-ONE"]
    assert assistants(workers["LAST-ONE"]) == ["first answer"]
    await client.close()


async def test_a_grandchild_reports_to_its_own_parent(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid, root = await _start(daemon_factory, fake_openai)
    fake_openai.default_reply = Reply().text("ack")
    fake_openai.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "worker", "task": "CHILD-JOB"}),
        Reply().text("root waits"),
        when=is_root,
    )
    child_first = first_is("CHILD-JOB")
    fake_openai.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "worker", "task": "GRAND-JOB"}),
        Reply().text("child waits"),
        when=lambda q: child_first(q) and not has("GRANDCHILD-ANSWER")(q),
    )
    fake_openai.enqueue(Reply().text("GRANDCHILD-ANSWER"), when=first_is("GRAND-JOB"))
    fake_openai.enqueue(Reply().text("CHILD-RELAYS"), when=has("GRANDCHILD-ANSWER", who="worker"))
    await _send(client, cid, "delegate deeply")
    notes = await collect_until(client, item_in(root, "CHILD-RELAYS"))
    [child, grandchild] = started_sessions(notes)
    assert grandchild["parentSessionId"] == child["sessionId"] and grandchild["depth"] == 2
    await collect_until(client, ended(root))
    child_reqs = [q for q in requests_of(fake_openai, "worker") if child_first(q)]
    got = [u for q in child_reqs for u in users(q) if "GRANDCHILD-ANSWER" in u]
    assert got and grandchild["sessionId"] in got[0]
    assert not any(has("GRANDCHILD-ANSWER")(q) for q in requests_of(fake_openai, "root"))
    items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
    reports = [i for i in items if i.get("origin") == "subagent"]
    assert reports and {i["fromSessionId"] for i in reports} == {child["sessionId"]}
    await client.close()


async def test_depth_and_concurrency_limits_are_clear_tool_errors(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid, root = await _start(
        daemon_factory, fake_openai, "max_depth = 1\nmax_concurrent = 1"
    )
    fake_openai.default_reply = Reply().text("ack")
    gate = Gate()
    fake_openai.enqueue(
        Reply()
        .tool_call("spawn_agent", {"agent": "worker", "task": "ONLY-CHILD"})
        .tool_call("spawn_agent", {"agent": "worker", "task": "ONE-TOO-MANY"})
        .tool_call("spawn_agent", {"agent": "nobody", "task": "x"}),
        Reply().wait(gate).text("root done"),
        when=is_root,
    )
    fake_openai.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "worker", "task": "TOO-DEEP"}),
        Reply().text("child done"),
        when=has("ONLY-CHILD", who="worker"),
    )
    await _send(client, cid, "go")
    await gate.wait_reached()
    outputs = tool_outputs(requests_of(fake_openai, "root")[1])
    assert len(spawned(requests_of(fake_openai, "root")[1])) == 1
    assert "limit is 1" in outputs[1] and "Configured agents" in outputs[2]
    gate.open()
    await collect_until(client, item_in(root, "child done"))
    deep = [q for q in requests_of(fake_openai, "worker") if tool_outputs(q)]
    assert "at most 1 level" in tool_outputs(deep[0])[0]
    assert not any(has("TOO-DEEP")(q) for q in fake_openai.requests)
    assert len(await _sessions(client, cid)) == 2
    await client.close()


async def test_wait_times_out_on_a_stalled_child_and_the_parent_drives_it(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid, root = await _start(daemon_factory, fake_openai, "wait_timeout_s = 1.0")
    fake_openai.default_reply = Reply().text("ack")
    fake_openai.enqueue(Reply().text("working on it").hang(), when=has("STALL-TASK"))
    fake_openai.enqueue(Reply().text("NEW-DONE"), when=has("NEW-INSTRUCTIONS", who="worker"))
    fake_openai.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "worker", "task": "STALL-TASK"}),
        # Asks for far longer than the configured cap: the cap wins.
        Reply().tool_call("wait", {"timeout_s": 300}),
        when=is_root,
    )

    def drive(req: RecordedRequest) -> Reply:
        [child] = spawned(req)
        return (
            Reply()
            .tool_call("list_agents", {})
            .tool_call("inspect_agent", {"agent_id": child, "items": 5})
            .tool_call("interrupt_agent", {"agent_id": child})
            .tool_call("send_message", {"agent_id": child, "message": "NEW-INSTRUCTIONS"})
            .tool_call("wait", {"agent_ids": [child], "timeout_s": 5})
            .tool_call("close_agent", {"agent_id": child})
            .tool_call("send_message", {"agent_id": child, "message": "too late"})
        )

    dynamic(fake_openai, lambda q: is_root(q) and len(tool_outputs(q)) == 2, drive)
    fake_openai.enqueue(Reply().text("ALL-DONE"), when=lambda q: len(tool_outputs(q)) == 9)
    started = time.monotonic()
    await _send(client, cid, "supervise")
    notes = await collect_until(client, item_in(root, "ALL-DONE", "agent_message"), timeout=45)
    assert time.monotonic() - started < 30  # the waits were capped at 1 s, not 300 s
    [child] = [s["sessionId"] for s in started_sessions(notes)]
    results = [
        n["params"]["item"]
        for n in notes
        if n["method"] == "item/completed" and n["params"]["item"]["type"] == "tool_result"
    ]
    out = {r["name"] + str(i): r for i, r in enumerate(results)}
    waited = json.loads(out["wait1"]["output"])
    assert waited["timed_out"] is True and 0.9 <= waited["waited_s"] < 3
    assert waited["agents"][0]["status"] == "running"
    listed = json.loads(out["list_agents2"]["output"])["agents"]
    assert [(a["agent_id"], a["status"]) for a in listed] == [(child, "running")]
    inspected = json.loads(out["inspect_agent3"]["output"])
    assert inspected["status"] == "running" and "usage" in inspected
    assert inspected["recent_items"][-1]["text"] == "working on it"
    interrupted = json.loads(out["interrupt_agent4"]["output"])
    assert interrupted["interrupted"] is True and interrupted["status"] == "interrupted"
    assert json.loads(out["send_message5"]["output"])["disposition"] == "started"
    second = json.loads(out["wait6"]["output"])
    assert second["timed_out"] is False and second["agents"][0]["last_answer"] == "NEW-DONE"
    closed = json.loads(out["close_agent7"]["output"])
    assert closed["closed"] == [{"agent_id": child, "status": "closed"}]
    assert out["send_message8"]["isError"] and "closed" in out["send_message8"]["output"]
    sessions = await _sessions(client, cid)
    assert sessions[child]["status"] == "closed"
    await client.close()


async def test_a_client_interrupts_and_messages_a_subagent_directly(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid, root = await _start(daemon_factory, fake_openai)
    fake_openai.default_reply = Reply().text("ack")
    fake_openai.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "worker", "task": "HANG-TASK"}),
        Reply().text("spawned"),
        when=is_root,
    )
    fake_openai.enqueue(Reply().text("partial").hang(), when=has("HANG-TASK"))
    fake_openai.enqueue(Reply().text("HELLO-CLIENT"), when=has("CLIENT-MSG", who="worker"))
    await _send(client, cid, "start one")
    notes = await collect_until(
        client, lambda n: n["method"] == "item/delta" and n["params"]["sessionId"] != root
    )
    child = notes[-1]["params"]["sessionId"]
    result = await client.request("turn/interrupt", {"conversationId": cid, "sessionId": child})
    assert result == {"interrupted": True}
    await collect_until(client, ended(child, "interrupted"))
    notes = await collect_until(client, item_in(root, "interrupted"))
    assert notes[-1]["params"]["item"]["fromSessionId"] == child
    sent = await _send(client, cid, "CLIENT-MSG", sid=child)
    assert sent["disposition"] == "started"
    notes = await collect_until(client, item_in(root, "HELLO-CLIENT"))
    child_items = completed_items_of(notes, child)
    assert [i["text"] for i in child_items if i["type"] == "user_message"] == ["CLIENT-MSG"]
    assert child_items[0]["origin"] == "user" and "fromSessionId" not in child_items[0]
    await client.close()


def completed_items_of(notes: list[Note], sid: str) -> list[dict[str, Any]]:
    return [
        n["params"]["item"]
        for n in notes
        if n["method"] == "item/completed" and n["params"]["sessionId"] == sid
    ]


@dataclass
class BusyRoot:
    """A root agent whose first turn spawned a worker (task QUICK-TASK, answer QUICK-ANSWER) and
    stalls on `root_busy`; the worker stalls on `child_gate`."""

    client: Client
    cid: str
    root: str
    root_busy: Gate
    child_gate: Gate


async def busy_root_with_worker(daemon_factory: Any, fake: FakeProvider) -> BusyRoot:
    _d, client, cid, root = await _start(daemon_factory, fake)
    fake.default_reply = Reply().text("ack")
    busy = BusyRoot(client, cid, root, Gate(), Gate())
    fake.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "worker", "task": "QUICK-TASK"}),
        Reply().text("root busy").wait(busy.root_busy),
        when=is_root,
    )
    fake.enqueue(Reply().wait(busy.child_gate).text("QUICK-ANSWER"), when=has("QUICK-TASK"))
    await _send(client, cid, "start")
    await busy.root_busy.wait_reached()
    return busy


async def test_a_waiting_user_message_goes_before_a_subagent_report(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    busy = await busy_root_with_worker(daemon_factory, fake_openai)
    client, cid, root, root_busy = busy.client, busy.cid, busy.root, busy.root_busy
    busy.child_gate.open()
    await collect_until(
        client,
        lambda n: (
            n["method"] == "inbox/updated"
            and n["params"]["sessionId"] == root
            and len(n["params"]["inputs"]) == 1
        ),
    )
    await _send(client, cid, "USER-MSG")
    notes = await collect_until(
        client,
        lambda n: (
            n["method"] == "inbox/updated"
            and n["params"]["sessionId"] == root
            and len(n["params"]["inputs"]) == 2
        ),
    )
    assert [i["origin"] for i in notes[-1]["params"]["inputs"]] == ["user", "subagent"]
    root_busy.open()
    await collect_until(client, item_in(root, "QUICK-ANSWER"))
    await collect_until(client, ended(root))
    # The user's message has a turn of its own; the report, which arrived first, the next one.
    asked = requests_of(fake_openai, "root")
    assert users(asked[2])[-1] == "USER-MSG"
    assert not any("QUICK-ANSWER" in t for r in asked[:3] for t in users(r))
    assert "QUICK-ANSWER" in users(asked[3])[-1]
    await client.close()


async def test_after_the_root_is_interrupted_a_report_waits_for_the_user(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid, root = await _start(daemon_factory, fake_openai)
    fake_openai.default_reply = Reply().text("ack")
    child_gate = Gate()
    fake_openai.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "worker", "task": "HELD-TASK"}),
        Reply().text("thinking").hang(),
        when=is_root,
    )
    fake_openai.enqueue(Reply().wait(child_gate).text("HELD-ANSWER"), when=has("HELD-TASK"))
    await _send(client, cid, "start")
    await collect_until(
        client, lambda n: n["method"] == "item/delta" and n["params"]["sessionId"] == root
    )
    await client.request("turn/interrupt", {"conversationId": cid})
    await collect_until(client, ended(root, "interrupted"))
    child_gate.open()
    notes = await collect_until(
        client,
        lambda n: (
            n["method"] == "inbox/updated"
            and n["params"]["sessionId"] == root
            and len(n["params"]["inputs"]) == 1
        ),
    )
    assert notes[-1]["params"]["inputs"][0]["origin"] == "subagent"
    quiet = await _drain(client, quiet=0.7)
    assert not any(
        n["method"] == "turn/started" and n["params"]["sessionId"] == root for n in quiet
    )
    assert len(requests_of(fake_openai, "root")) == 2
    assert (await _sessions(client, cid))[root]["status"] == "waiting"
    await _send(client, cid, "RESUME")
    await collect_until(client, ended(root, "completed"))
    texts = users(requests_of(fake_openai, "root")[2])
    assert texts.index("RESUME") < next(i for i, t in enumerate(texts) if "HELD-ANSWER" in t)
    await client.close()


async def test_after_a_restart_subagents_list_with_their_last_status(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d, client, cid, root = await _start(daemon_factory, fake_openai)
    fake_openai.default_reply = Reply().text("ack")
    fake_openai.enqueue(
        Reply()
        .tool_call("spawn_agent", {"agent": "worker", "task": "RUNS-ON"})
        .tool_call("spawn_agent", {"agent": "worker", "task": "FINISHES"})
        .tool_call("spawn_agent", {"agent": "reviewer", "task": "FAILS"}),
        Reply().text("spawned"),
        when=is_root,
    )
    fake_openai.enqueue(Reply().text("still going").hang(), when=has("RUNS-ON"))
    fake_openai.enqueue(Reply().text("finished"), when=has("FINISHES"))
    fake_openai.enqueue(Reply.bad_request("no"), when=has("FAILS"))
    await _send(client, cid, "three of them")
    notes = await collect_until(client, item_in(root, "FINISHES"))
    notes += await collect_until(client, item_in(root, "FAILS"))
    await _drain(client, quiet=0.5)
    by_task = {s["title"]: s["sessionId"] for s in started_sessions(notes)}
    before = await _sessions(client, cid)
    assert before[by_task["RUNS-ON"]]["status"] == "running"
    await client.close()
    d.kill()
    d.start()
    client = await d.client()
    after = await _sessions(client, cid)
    assert set(after) == {root, *by_task.values()}
    assert {t: after[s]["status"] for t, s in by_task.items()} == {
        "RUNS-ON": "interrupted",
        "FINISHES": "idle",
        "FAILS": "failed",
    }
    assert all(after[s]["parentSessionId"] == root for s in by_task.values())
    assert after[by_task["FAILS"]]["model"] == "other"
    # The interrupted subagent can be messaged again.
    fake_openai.enqueue(Reply().text("back again"), when=has("CONTINUE", who="worker"))
    await client.subscribe(cid)
    sent = await _send(client, cid, "CONTINUE", sid=by_task["RUNS-ON"])
    assert sent["disposition"] == "started"
    await collect_until(client, ended(by_task["RUNS-ON"], "completed"))
    await client.close()


async def test_the_demo_model_spawns_a_subagent_that_reports_back(daemon: Daemon) -> None:
    client = await daemon.client()
    cid = await new_conversation(client, str(daemon.workdir))
    await client.request(
        "input/send", {"conversationId": cid, "text": "spawn: count the files", "mode": "queue"}
    )
    notes = await collect_until(
        client,
        lambda n: (
            n["method"] == "item/completed" and n["params"]["item"].get("origin") == "subagent"
        ),
        timeout=20,
    )
    [started] = [n for n in notes if n["method"] == "session/started"]
    child = started["params"]["session"]
    assert child["parentSessionId"] is not None and child["depth"] == 1
    child_items = (
        await client.request(
            "conversation/read", {"conversationId": cid, "sessionId": child["sessionId"]}
        )
    )["items"]
    assert child_items[0]["text"] == "count the files"
    sessions = (await client.request("sessions/list", {"conversationId": cid}))["sessions"]
    assert len(sessions) == 2
    await client.close()
