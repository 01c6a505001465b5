"""Input while the agent works, through the real daemon and a scripted provider that the test
releases step by step: steer, queue, jump, editing waiting input, and interrupts."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import orjson
import pytest
from websockets.asyncio.client import connect

from openvaala_server.client import Client, RpcError
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.server.tools.processes import survivors, wait_for_processes
from tests.support.daemon import Daemon
from tests.support.events import (
    collect_until,
    completed_items,
    new_conversation,
    tool_started,
    turn_ended,
)


def _config(fake: FakeProvider) -> str:
    return (
        fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "test agent"\nmodel = "fake"\n'
        + "\n[retry]\nbase_delay_s = 0.01\nmax_delay_s = 0.05\n"
    )


def _user_texts(request_json: dict[str, Any]) -> list[str]:
    texts = []
    for message in request_json["messages"]:
        if message["role"] == "user":
            content = message["content"]
            texts.append(content if isinstance(content, str) else str(content))
    return texts


async def _start(daemon_factory: Any, fake: FakeProvider) -> tuple[Daemon, Client, str]:
    d: Daemon = daemon_factory(config=_config(fake))
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    return d, client, cid


async def _send(client: Client, cid: str, text: str, mode: str) -> dict[str, Any]:
    result: dict[str, Any] = await client.request(
        "input/send", {"conversationId": cid, "text": text, "mode": mode}
    )
    return result


def _wait_command(path: str) -> str:
    return f"while [ ! -f {path} ]; do sleep 0.02; done; echo released"


async def test_steer_during_a_tool_call_joins_the_next_model_call(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d, client, cid = await _start(daemon_factory, fake_openai)
    go = d.workdir / "go"
    fake_openai.enqueue(
        Reply().tool_call("shell", {"command": _wait_command(str(go))}), Reply().text("done")
    )
    await _send(client, cid, "start", "queue")
    await collect_until(
        client,
        tool_started,
    )
    sent = await _send(client, cid, "also check the README", "steer")
    assert sent["disposition"] == "steering"
    go.touch()
    notes = await collect_until(client, turn_ended())
    first, second = (r.json for r in fake_openai.requests)
    assert "also check the README" not in str(first)
    assert _user_texts(second)[-1] == "also check the README"
    # The steer became part of the running turn, after the tool's result.
    assert sum(1 for n in notes if n["method"] == "turn/started") == 0
    items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
    kinds = [(i["type"], i.get("text")) for i in items]
    assert kinds.index(("user_message", "also check the README")) > [k for k, _ in kinds].index(
        "tool_result"
    )
    assert len({i["turnId"] for i in items}) == 1
    await client.close()


async def test_a_steer_the_turn_never_read_starts_the_next_turn(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _start(daemon_factory, fake_openai)
    gate = Gate()
    fake_openai.enqueue(Reply().text("thinking").wait(gate).text(" done"), Reply().text("ok"))
    await _send(client, cid, "first", "queue")
    await gate.wait_reached()
    await _send(client, cid, "late steer", "steer")
    gate.open()
    await collect_until(client, turn_ended())
    notes = await collect_until(client, turn_ended())
    assert sum(1 for n in notes if n["method"] == "turn/started") == 1
    assert completed_items(notes, "user_message")[0]["text"] == "late steer"
    assert _user_texts(fake_openai.requests[1].json)[-1] == "late steer"
    await client.close()


async def test_queued_messages_start_turns_in_order(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _start(daemon_factory, fake_openai)
    gate = Gate()
    fake_openai.enqueue(Reply().text("one").wait(gate), Reply().text("two"), Reply().text("three"))
    await _send(client, cid, "first", "queue")
    await gate.wait_reached()
    assert (await _send(client, cid, "second", "queue"))["disposition"] == "queued"
    assert (await _send(client, cid, "third", "queue"))["disposition"] == "queued"
    gate.open()
    for _ in range(3):
        await collect_until(client, turn_ended())
    assert [_user_texts(r.json)[-1] for r in fake_openai.requests] == ["first", "second", "third"]
    await client.close()


async def test_jump_interrupts_and_goes_before_the_queue(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _start(daemon_factory, fake_openai)
    fake_openai.enqueue(Reply().text("partial answer").hang(), Reply().text("j"), Reply().text("q"))
    await _send(client, cid, "first", "queue")
    await collect_until(client, lambda n: n["method"] == "item/delta")
    await _send(client, cid, "queued", "queue")
    assert (await _send(client, cid, "urgent", "jump"))["disposition"] == "jumped"
    ended = await collect_until(client, turn_ended())
    assert ended[-1]["params"]["status"] == "interrupted"
    # The partial answer is kept, marked interrupted.
    partial = completed_items(ended, "agent_message")
    assert partial and partial[0]["status"] == "interrupted"
    assert partial[0]["text"] == "partial answer"
    await collect_until(client, turn_ended())
    await collect_until(client, turn_ended())
    texts = [_user_texts(r.json) for r in fake_openai.requests]
    assert texts[1][-1] == "urgent" and texts[2][-1] == "queued"
    assert any("interrupted" in t for t in texts[1])  # the model is told
    await client.close()


async def test_waiting_input_is_edited_and_withdrawn_from_another_client(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d, a, cid = await _start(daemon_factory, fake_openai)
    b = await d.client("b")
    await b.subscribe(cid)
    gate = Gate()
    fake_openai.enqueue(Reply().text("busy").wait(gate), Reply().text("ok"))
    await _send(a, cid, "first", "queue")
    await gate.wait_reached()
    keep = await _send(a, cid, "draft one", "queue")
    drop = await _send(a, cid, "never mind", "queue")
    await b.request("input/edit", {"inputId": keep["inputId"], "text": "final one"})
    update = await collect_until(
        a,
        lambda n: (
            n["method"] == "inbox/updated"
            and any(i["text"] == "final one" for i in n["params"]["inputs"])
        ),
    )
    assert [i["inputId"] for i in update[-1]["params"]["inputs"]] == [
        keep["inputId"],
        drop["inputId"],
    ]
    back = await b.request("input/withdraw", {"inputId": drop["inputId"]})
    assert back == {"text": "never mind"}
    gate.open()
    await collect_until(a, turn_ended())
    await collect_until(a, turn_ended())
    assert _user_texts(fake_openai.requests[1].json)[-1] == "final one"
    assert len(fake_openai.requests) == 2
    # The input was consumed by its turn: editing it now is refused, nothing handled twice.
    with pytest.raises(RpcError) as err:
        await b.request("input/edit", {"inputId": keep["inputId"], "text": "too late"})
    assert err.value.kind == "input_consumed"
    with pytest.raises(RpcError) as err:
        await b.request("input/withdraw", {"inputId": drop["inputId"]})
    assert err.value.kind == "input_consumed"
    await a.close()
    await b.close()


async def test_hand_a_queued_input_to_the_running_turn(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d, client, cid = await _start(daemon_factory, fake_openai)
    go = d.workdir / "go"
    fake_openai.enqueue(
        Reply().tool_call("shell", {"command": _wait_command(str(go))}), Reply().text("done")
    )
    await _send(client, cid, "start", "queue")
    await collect_until(
        client,
        tool_started,
    )
    queued = await _send(client, cid, "use the fast path", "queue")
    await client.request("input/steer", {"inputId": queued["inputId"]})
    go.touch()
    await collect_until(client, turn_ended())
    assert _user_texts(fake_openai.requests[1].json)[-1] == "use the fast path"
    assert len(fake_openai.requests) == 2
    await client.close()


async def test_interrupt_during_reasoning_keeps_it_marked(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _start(daemon_factory, fake_openai)
    fake_openai.enqueue(Reply().reasoning("let me think").hang(), Reply().text("fine"))
    await _send(client, cid, "go", "queue")
    await collect_until(client, lambda n: n["method"] == "item/delta")
    await client.request("turn/interrupt", {"conversationId": cid})
    notes = await collect_until(client, turn_ended())
    assert notes[-1]["params"]["status"] == "interrupted"
    [reasoning] = completed_items(notes, "reasoning")
    assert reasoning["status"] == "interrupted" and reasoning["text"] == "let me think"
    [notice] = completed_items(notes, "notice")
    await _send(client, cid, "continue", "queue")
    await collect_until(client, turn_ended())
    assert any(notice["text"] in t for t in _user_texts(fake_openai.requests[1].json))
    items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
    assert [i["status"] for i in items if i["type"] == "reasoning"] == ["interrupted"]
    await client.close()


async def test_interrupt_kills_a_running_shell_command(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _start(daemon_factory, fake_openai)
    # Found by its unique sleep: inside the sandbox's PID namespace `$!` is not a host pid.
    mark = f"300.{secrets.randbelow(10**6):06d}"
    command = f"sleep {mark} & echo started; wait"
    fake_openai.enqueue(Reply().tool_call("shell", {"command": command}))
    await _send(client, cid, "run it", "queue")
    await collect_until(
        client, lambda n: n["method"] == "item/delta" and n["params"]["field"] == "output"
    )
    assert len(wait_for_processes(mark, "sleep", 1)) == 1
    await client.request("turn/interrupt", {"conversationId": cid})
    notes = await collect_until(client, turn_ended())
    [result] = completed_items(notes, "tool_result")
    assert result["status"] == "interrupted" and "started" in result["output"]
    assert survivors(mark) == []
    await client.close()


async def test_a_client_sees_the_turn_start_before_the_answer_that_started_it(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d, client, cid = await _start(daemon_factory, fake_openai)
    await client.close()
    gate = Gate()
    fake_openai.enqueue(Reply().wait(gate).text("done"))
    # The frames exactly as they come off the socket: the answer "started" must come after the
    # turn's start, so no client shows an idle session that is in fact running.
    async with connect(
        f"ws://{d.address}/ws", additional_headers={"Authorization": f"Bearer {d.token}"}
    ) as ws:
        frames = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "conversation/subscribe",
                "params": {"conversationId": cid},
            },
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "input/send",
                "params": {"conversationId": cid, "text": "hello"},
            },
        ]
        for frame in frames:
            await ws.send(orjson.dumps(frame).decode())
        order: list[str] = []
        while "answer" not in order:
            message = orjson.loads(await asyncio.wait_for(ws.recv(), 10))
            if message.get("id") == 3:
                assert message["result"]["disposition"] == "started"
                order.append("answer")
            elif message.get("method") == "turn/started":
                order.append("turn/started")
        assert order == ["turn/started", "answer"]
        gate.open()
