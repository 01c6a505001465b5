"""`update_plan` through the real daemon: the plan reaches every subscribed client live, is in the
snapshot of a client that joins later, survives a restart, and a bad plan is refused clearly."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import (
    collect_until,
    completed_items,
    new_conversation,
    snapshot_of,
    turn_ended,
)

Factory = Callable[..., Daemon]

STEPS = [
    {"step": "Read the failing test", "status": "completed"},
    {"step": "Fix the parser", "status": "in_progress"},
    {"step": "Run the suite", "status": "pending"},
]


def config(fake: FakeProvider) -> str:
    # No `tools`: the default agent has update_plan.
    return fake.config_toml("fake") + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\n'


async def test_update_plan_reaches_two_clients_a_late_one_and_survives_a_restart(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake))
    fake.enqueue(
        Reply().tool_call("update_plan", {"explanation": "Found the bug", "plan": STEPS}),
        Reply().text("Working on it."),
    )
    first, second = await d.client("one"), await d.client("two")
    try:
        cid = await new_conversation(first, str(d.workdir))
        await second.subscribe(cid)
        await first.request("input/send", {"conversationId": cid, "text": "fix", "mode": "queue"})
        seen = await asyncio.gather(
            collect_until(first, turn_ended()), collect_until(second, turn_ended())
        )
        expected = {"explanation": "Found the bug", "steps": STEPS}
        [started] = [n["params"] for n in seen[0] if n["method"] == "turn/started"]
        for notes in seen:
            [update] = [n["params"] for n in notes if n["method"] == "plan/updated"]
            assert update["plan"] == expected and update["conversationId"] == cid
            assert update["sessionId"] == started["sessionId"]
        [result] = completed_items(seen[0], "tool_result")
        assert not result["isError"] and "[~] Fix the parser" in result["output"]
        # The tool is offered to the model and its result reaches the next request.
        assert any(t["function"]["name"] == "update_plan" for t in fake.requests[0].json["tools"])
        tool_messages = [m for m in fake.requests[-1].json["messages"] if m["role"] == "tool"]
        assert "[x] Read the failing test" in tool_messages[-1]["content"]

        late = await d.client("late")
        snapshot = await snapshot_of(late, cid)
        assert snapshot["sessions"][0]["plan"] == expected
        await late.close()
    finally:
        await first.close()
        await second.close()

    d.restart()
    client = await d.client("after")
    try:
        snapshot = await snapshot_of(client, cid)
        assert snapshot["sessions"][0]["plan"] == {"explanation": "Found the bug", "steps": STEPS}
    finally:
        await client.close()


async def test_a_plan_with_two_steps_in_progress_is_refused_and_the_old_plan_stays(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake))
    two_running = [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]
    fake.enqueue(
        Reply().tool_call("update_plan", {"plan": STEPS}),
        Reply().tool_call("update_plan", {"plan": two_running}),
        Reply().tool_call("update_plan", {"plan": [{"step": "x", "status": "done"}]}),
        Reply().text("ok"),
    )
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
        notes = await collect_until(client, turn_ended())
        assert len([n for n in notes if n["method"] == "plan/updated"]) == 1
        good, two, bad_status = completed_items(notes, "tool_result")
        assert not good["isError"]
        assert two["isError"] and "at most one step may be in_progress" in two["output"]
        assert bad_status["isError"] and "'done'" in bad_status["output"]
        snapshot = await snapshot_of(client, cid)
        assert snapshot["sessions"][0]["plan"] == {"steps": STEPS}
    finally:
        await client.close()


async def test_the_demo_model_calls_update_plan_on_request(daemon_factory: Factory) -> None:
    d = daemon_factory()  # the built-in demo model: `call: TOOL {json}` calls any tool it has
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        text = 'call: update_plan {"plan": [{"step": "Try the demo", "status": "in_progress"}]}'
        await client.request("input/send", {"conversationId": cid, "text": text, "mode": "queue"})
        notes = await collect_until(client, turn_ended())
        [update] = [n["params"] for n in notes if n["method"] == "plan/updated"]
        assert update["plan"] == {"steps": [{"step": "Try the demo", "status": "in_progress"}]}
        [answer] = completed_items(notes, "agent_message")
        assert answer["text"].startswith("The update_plan call finished.")
    finally:
        await client.close()


async def test_a_fork_starts_with_the_plan_of_the_point_it_copies(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake))
    later = [{"step": s["step"], "status": "completed"} for s in STEPS]
    fake.enqueue(
        Reply().tool_call("update_plan", {"plan": STEPS}),
        Reply().text("first"),
        Reply().tool_call("update_plan", {"plan": later}),
        Reply().text("second"),
    )
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        for text in ("one", "two"):
            await client.request(
                "input/send", {"conversationId": cid, "text": text, "mode": "queue"}
            )
            await collect_until(client, turn_ended())
        read = await client.request("conversation/read", {"conversationId": cid})
        end_of_first = next(i for i in read["items"] if i.get("text") == "first")["itemId"]

        async def plan_of_fork(**params: str) -> object:
            forked = await client.request("conversation/fork", {"conversationId": cid, **params})
            fork_id = forked["conversation"]["conversationId"]
            return (await snapshot_of(client, fork_id))["sessions"][0]["plan"]

        assert await plan_of_fork(upToItemId=end_of_first) == {"steps": STEPS}
        assert await plan_of_fork() == {"steps": later}
    finally:
        await client.close()
