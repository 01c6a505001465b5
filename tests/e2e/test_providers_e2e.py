"""Real model providers through the real daemon: a daemon subprocess talks to the fake provider
over HTTP in each wire format (Chat Completions, Responses, Anthropic Messages) while the test
watches the websocket as a client would.

Covered: streaming answers, tool calls (one and two in parallel) with their results sent back,
reasoning, reported usage, retries (429 with Retry-After, 5xx, a dropped stream) with the failed
attempt's output withdrawn, giving up after the configured attempts, errors that must not be
retried (401 without leaking the key, context overflow), and interrupts mid-stream and during a
retry wait.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.client import Client
from openvaala_server.runtime.turn_end import INTERRUPT_NOTICE
from tests.fakes.providers import API_KEY_ENV, FakeProvider, RecordedRequest
from tests.fakes.script import Gate, Reply
from tests.fakes.wire import ANTHROPIC, CHAT, RESPONSES
from tests.support.daemon import Daemon, make_daemon
from tests.support.events import (
    Note,
    collect_until,
    completed_items,
    method_is,
    new_conversation,
    run_turn,
    turn_ended,
)

FAST_RETRY = {"base_delay_s": 0.01, "max_delay_s": 0.05}
WIRE_PARAMS = [CHAT, RESPONSES, ANTHROPIC]

Shared = tuple[FakeProvider, Daemon]  # a fake and a daemon pointed at it, shared by a module
Setup = tuple[FakeProvider, Client, str]  # ... plus a connected client and a new conversation


def daemon_config(fake: FakeProvider, **retry: float) -> str:
    """A config whose default agent uses the fake; retries are fast unless `retry` says else."""
    values = {**FAST_RETRY, **retry}
    lines = [
        fake.config_toml("fake"),
        "[agents.default]",
        'description = "Provider end-to-end tests"',
        'model = "fake"',
        'instructions = "You are a test agent."',
        "",
        "[retry]",
        *(f"{key} = {value}" for key, value in values.items()),
    ]
    return "\n".join(lines) + "\n"


async def start(
    daemon_factory: Callable[..., Daemon], fake: FakeProvider, **retry: float
) -> tuple[Daemon, Client, str]:
    """A daemon of its own, for tests that need their own environment."""
    d = daemon_factory(config=daemon_config(fake, **retry))
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    return d, client, cid


# Starting a daemon takes about a second, so most tests share one per wire format (each test has
# its own conversation and a reset fake). "fast" retries at once; "patient" waits as long as a
# provider asks (its backoff floor is still 10 ms).


def _shared(wire: str, tmp: Path, **retry: float) -> Iterator[Shared]:
    fake = FakeProvider(wire=wire).start()
    d = make_daemon(tmp, daemon_config(fake, **retry))
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(API_KEY_ENV, fake.api_key or "")
            d.start()
        yield fake, d
    finally:
        d.stop()
        fake.stop()


@pytest.fixture(scope="module", params=WIRE_PARAMS)
def fast_daemon(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Shared]:
    yield from _shared(request.param, tmp_path_factory.mktemp(f"fast-{request.param}"))


@pytest.fixture(scope="module", params=WIRE_PARAMS)
def patient_daemon(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Shared]:
    tmp = tmp_path_factory.mktemp(f"patient-{request.param}")
    yield from _shared(request.param, tmp, max_delay_s=60)


async def _connect(shared: Shared) -> Setup:
    fake, d = shared
    fake.reset()
    client = await d.client()
    return fake, client, await new_conversation(client, str(d.workdir))


@pytest.fixture
async def fast(fast_daemon: Shared) -> AsyncIterator[Setup]:
    """(fake, client, conversation id) on the shared fast-retry daemon of this wire format."""
    fake, client, cid = await _connect(fast_daemon)
    yield fake, client, cid
    await client.close()


@pytest.fixture
async def patient(patient_daemon: Shared) -> AsyncIterator[Setup]:
    """(fake, client, conversation id) on the shared patient daemon of this wire format."""
    fake, client, cid = await _connect(patient_daemon)
    yield fake, client, cid
    await client.close()


async def send(client: Client, cid: str, text: str) -> None:
    await client.request("input/send", {"conversationId": cid, "text": text, "mode": "queue"})


async def read_items(client: Client, cid: str) -> list[dict[str, Any]]:
    page = await client.request("conversation/read", {"conversationId": cid})
    items: list[Any] = page["items"]
    return items


def methods(notes: list[Note], name: str) -> list[dict[str, Any]]:
    return [n["params"] for n in notes if n["method"] == name]


def deltas(notes: list[Note], item_id: str, field: str = "text") -> str:
    return "".join(
        p["delta"]
        for p in methods(notes, "item/delta")
        if p["itemId"] == item_id and p["field"] == field
    )


def started(notes: list[Note], item_type: str) -> list[dict[str, Any]]:
    return [p["item"] for p in methods(notes, "item/started") if p["item"]["type"] == item_type]


def shown(notes: list[Note]) -> list[tuple[str, str]]:
    """What a client folding the events displays: (type, text) of every item still standing."""
    items: dict[str, dict[str, Any]] = {}
    for note in notes:
        p = note["params"]
        if note["method"] in ("item/started", "item/completed"):
            items[p["item"]["itemId"]] = dict(p["item"])
        elif note["method"] == "item/delta":
            item = items[p["itemId"]]
            item[p["field"]] = item.get(p["field"], "") + p["delta"]
        elif note["method"] == "item/discarded":
            items.pop(p["itemId"])
    return [(i["type"], i.get("text", i.get("output", ""))) for i in items.values()]


async def until_streamed(client: Client, item_type: str, text: str) -> list[Note]:
    """Notifications up to the point where the first `item_type` item has streamed `text`."""
    notes: list[Note] = []

    def stop(note: Note) -> bool:
        notes.append(note)
        items = started(notes, item_type)
        return bool(items) and deltas(notes, items[0]["itemId"]) == text

    await collect_until(client, stop)
    return notes


def tool_outputs(request: RecordedRequest) -> dict[str, str]:
    """The tool results a request sends back to the model, by call id, in its wire format."""
    body = request.json
    out: dict[str, str] = {}
    if request.wire == CHAT:
        for message in body["messages"]:
            if message.get("role") == "tool":
                out[message["tool_call_id"]] = message["content"]
    elif request.wire == RESPONSES:
        for item in body["input"]:
            if item.get("type") == "function_call_output":
                out[item["call_id"]] = item["output"]
    else:
        assert request.wire == ANTHROPIC
        for message in body["messages"]:
            if message["role"] != "user" or isinstance(message["content"], str):
                continue
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    if isinstance(content, list):
                        content = "".join(b.get("text", "") for b in content)
                    out[block["tool_use_id"]] = content
    return out


def request_text(request: RecordedRequest) -> str:
    """The request body as one string, for "does it mention X anywhere" checks."""
    return json.dumps(request.json, ensure_ascii=False)


# -- answers, tools, reasoning, usage ---------------------------------------------------------


async def test_plain_answer_streams_and_completes(fast: Setup) -> None:
    fake, client, cid = fast
    fake.enqueue(Reply().text("Hel", "lo ", "world"))
    notes = await run_turn(client, cid, "say hello")
    assert notes[-1]["params"]["status"] == "completed"
    [answer] = completed_items(notes, "agent_message")
    assert answer["text"] == "Hello world" and answer["status"] == "completed"
    assert deltas(notes, answer["itemId"]) == "Hello world"
    assert len(methods(notes, "item/delta")) == 3  # streamed chunk by chunk, not at the end
    [request] = fake.requests
    assert "say hello" in request_text(request) and "You are a test agent." in request_text(request)
    assert request.json["stream"] is True
    items = await read_items(client, cid)
    assert [(i["type"], i.get("text")) for i in items] == [
        ("user_message", "say hello"),
        ("agent_message", "Hello world"),
    ]


async def test_tool_call_result_goes_back_then_answer(fast: Setup) -> None:
    fake, client, cid = fast
    fake.enqueue(Reply().tool_call("shell", {"command": "echo hi"}), Reply().text("It printed hi."))
    notes = await run_turn(client, cid, "run echo")
    assert notes[-1]["params"]["status"] == "completed"
    [call] = completed_items(notes, "tool_call")
    [result] = completed_items(notes, "tool_result")
    assert call["name"] == "shell" and call["arguments"] == {"command": "echo hi"}
    assert result["callId"] == call["callId"] and not result["isError"]
    assert result["output"] == "hi\nexit code: 0"
    assert "hi\n" in deltas(notes, result["itemId"], "output")
    [answer] = completed_items(notes, "agent_message")
    assert answer["text"] == "It printed hi."
    first, second = fake.requests
    assert "shell" in request_text(first)  # the tool was offered
    assert tool_outputs(first) == {}
    sent = tool_outputs(second)
    assert sent == {call["callId"]: result["output"]}
    items = await read_items(client, cid)
    assert [i["type"] for i in items] == [
        "user_message",
        "tool_call",
        "tool_result",
        "agent_message",
    ]


async def test_two_parallel_tool_calls_both_run(fast: Setup) -> None:
    fake, client, cid = fast
    fake.enqueue(
        Reply()
        .tool_call("shell", {"command": "echo first-output"})
        .tool_call("shell", {"command": "echo second-output"}),
        Reply().text("Both ran."),
    )
    notes = await run_turn(client, cid, "run both")
    assert notes[-1]["params"]["status"] == "completed"
    calls = completed_items(notes, "tool_call")
    results = completed_items(notes, "tool_result")
    assert [c["arguments"]["command"] for c in calls] == [
        "echo first-output",
        "echo second-output",
    ]
    assert len({c["callId"] for c in calls}) == 2
    by_call = {r["callId"]: r for r in results}
    assert set(by_call) == {c["callId"] for c in calls}
    assert "first-output" in by_call[calls[0]["callId"]]["output"]
    assert "second-output" in by_call[calls[1]["callId"]]["output"]
    assert len(fake.requests) == 2  # both results go back in one request
    sent = tool_outputs(fake.requests[1])
    assert sent == {call_id: r["output"] for call_id, r in by_call.items()}


async def test_reasoning_is_streamed_as_a_reasoning_item(fast: Setup) -> None:
    fake, client, cid = fast
    fake.enqueue(Reply().reasoning("Let me ", "think.").text("The answer."))
    notes = await run_turn(client, cid, "think first")
    assert notes[-1]["params"]["status"] == "completed"
    [reasoning] = completed_items(notes, "reasoning")
    assert reasoning["text"] == "Let me think." and reasoning["status"] == "completed"
    assert deltas(notes, reasoning["itemId"]) == "Let me think."
    [answer] = completed_items(notes, "agent_message")
    assert answer["text"] == "The answer."
    items = await read_items(client, cid)
    assert [i["type"] for i in items] == ["user_message", "reasoning", "agent_message"]


async def test_reported_usage_reaches_clients(fast: Setup) -> None:
    fake, client, cid = fast
    fake.enqueue(Reply().text("Counted.").usage(1234, 56, cached_input_tokens=200))
    notes = await run_turn(client, cid, "count me")
    reported = [p["usage"] for p in methods(notes, "usage/updated")]
    reported = [u for u in reported if u["source"] == "reported"]
    assert reported and reported[-1]["used"] == 1234 + 56
    assert reported[-1]["contextWindow"] == 32_000 and "reportedAt" in reported[-1]
    usage = await client.request("conversation/usage", {"conversationId": cid})
    assert usage["source"] == "reported"
    assert usage["used"] == 1234 + 56


# -- retries ----------------------------------------------------------------------------------


async def test_rate_limit_honours_retry_after_then_succeeds(patient: Setup) -> None:
    fake, client, cid = patient
    fake.enqueue(Reply.rate_limited(retry_after=1), Reply().text("After the wait."))
    notes = await run_turn(client, cid, "hurry")
    assert notes[-1]["params"]["status"] == "completed"
    [retry] = methods(notes, "retry/scheduled")
    assert retry["attempt"] == 1 and retry["maxAttempts"] == 11
    assert retry["delaySeconds"] == 1
    assert retry["error"]["kind"] == "provider_unavailable"
    first, second = fake.requests
    assert first.status == 429 and second.status == 200
    assert second.received_at - first.received_at >= 0.9
    [answer] = completed_items(notes, "agent_message")
    assert answer["text"] == "After the wait."


async def test_server_error_is_retried(fast: Setup) -> None:
    fake, client, cid = fast
    fake.enqueue(Reply.server_error(500), Reply().text("Recovered."))
    notes = await run_turn(client, cid, "try")
    assert notes[-1]["params"]["status"] == "completed"
    [retry] = methods(notes, "retry/scheduled")
    assert retry["attempt"] == 1 and retry["maxAttempts"] == 11
    assert 0 < retry["delaySeconds"] <= 0.05
    assert retry["error"]["kind"] == "provider_unavailable" and "500" in retry["error"]["message"]
    assert [r.status for r in fake.requests] == [500, 200]
    assert [i["text"] for i in completed_items(notes, "agent_message")] == ["Recovered."]


@pytest.mark.parametrize("how", ["reset", "cut_short", "error_event"])
async def test_broken_stream_is_withdrawn_and_retried(fast: Setup, how: str) -> None:
    """A stream that breaks mid-answer: a connection reset, a body that ends cleanly before the
    wire format's final events, or an error event inside the 200 stream."""
    fake, client, cid = fast
    gate = Gate()
    broken = Reply().text("Partial ans").wait(gate)
    if how == "reset":
        broken.drop()
    elif how == "cut_short":
        broken.end_stream()
    else:
        broken.stream_error("overloaded")
    fake.enqueue(broken, Reply().text("The full answer."))
    await send(client, cid, "answer me")
    # Only drop the connection once clients have seen the partial text.
    notes = await until_streamed(client, "agent_message", "Partial ans")
    gate.open()
    notes += await collect_until(client, turn_ended())
    assert notes[-1]["params"]["status"] == "completed"
    partial, final = started(notes, "agent_message")
    assert deltas(notes, partial["itemId"]) == "Partial ans"
    assert [p["itemId"] for p in methods(notes, "item/discarded")] == [partial["itemId"]]
    [retry] = methods(notes, "retry/scheduled")
    assert retry["attempt"] == 1 and retry["error"]["kind"] == "provider_unavailable"
    # The withdrawal comes before the retry, so the partial text is gone before the new one.
    order = [n["method"] for n in notes]
    assert order.index("item/discarded") < order.index("retry/scheduled")
    [answer] = completed_items(notes, "agent_message")
    assert answer["itemId"] == final["itemId"] and answer["text"] == "The full answer."
    assert shown(notes) == [("user_message", "answer me"), ("agent_message", "The full answer.")]
    items = await read_items(client, cid)
    assert [(i["type"], i.get("text")) for i in items] == [
        ("user_message", "answer me"),
        ("agent_message", "The full answer."),
    ]
    # The retried request is the same request: the partial text is not sent as history.
    assert "Partial ans" not in request_text(fake.requests[1])


async def test_tool_call_of_a_broken_stream_never_runs(fast: Setup, fast_daemon: Shared) -> None:
    fake, client, cid = fast
    marker = fast_daemon[1].workdir / f"ran-{cid}"
    gate = Gate()
    fake.enqueue(
        Reply().tool_call("shell", {"command": f"touch {marker.name}"}).wait(gate).drop(),
        Reply().text("Nothing to run."),
    )
    await send(client, cid, "maybe run something")
    assert await gate.wait_reached()
    gate.open()
    notes = await collect_until(client, turn_ended())
    assert notes[-1]["params"]["status"] == "completed"
    assert not marker.exists()
    assert started(notes, "tool_result") == []
    discarded = {p["itemId"] for p in methods(notes, "item/discarded")}
    assert {c["itemId"] for c in started(notes, "tool_call")} <= discarded
    assert shown(notes) == [
        ("user_message", "maybe run something"),
        ("agent_message", "Nothing to run."),
    ]
    assert [i["type"] for i in await read_items(client, cid)] == ["user_message", "agent_message"]


async def test_gives_up_after_ten_retries(fast: Setup) -> None:
    """The spec: a temporary error is retried up to 10 times after the first attempt."""
    fake, client, cid = fast
    fake.enqueue(*(Reply.server_error(503) for _ in range(11)))
    notes = await run_turn(client, cid, "never works")
    ended = notes[-1]["params"]
    assert ended["status"] == "failed"
    assert ended["error"]["kind"] == "provider_unavailable"
    assert "11 attempts" in ended["error"]["message"]
    retries = methods(notes, "retry/scheduled")
    assert [r["attempt"] for r in retries] == list(range(1, 11))
    assert {r["maxAttempts"] for r in retries} == {11}
    assert len(fake.requests) == 11 and fake.pending == 0
    # Nothing the failed attempts produced is kept (a notice saying why the turn failed may be).
    items = await read_items(client, cid)
    assert [i["type"] for i in items if i["type"] != "notice"] == ["user_message"]


# -- errors that must not be retried ----------------------------------------------------------


async def assert_auth_failed_without_leak(
    fake: FakeProvider, d: Daemon, client: Client, cid: str, secret: str
) -> None:
    notes = await run_turn(client, cid, "hello")
    ended = notes[-1]["params"]
    assert ended["status"] == "failed" and ended["error"]["kind"] == "auth_failed"
    assert API_KEY_ENV in ended["error"]["message"]  # tells the user where to fix it
    assert methods(notes, "retry/scheduled") == []
    [request] = fake.requests
    assert request.status == 401
    assert secret not in json.dumps(notes)
    assert secret not in json.dumps(await read_items(client, cid))
    assert secret not in json.dumps(await client.request("conversation/list"))
    assert secret not in d.log_path.read_text(errors="replace")
    # Nor anywhere in what the daemon wrote to disk.
    for path in d.home.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


async def test_rejected_key_fails_at_once_and_is_never_repeated(
    fake_provider: FakeProvider,
    daemon_factory: Callable[..., Daemon],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The daemon holds a key the fake rejects, and the fake's 401 echoes it back in full.
    secret = "sk-wrong-secret-key-0123456789"
    monkeypatch.setenv(API_KEY_ENV, secret)
    d, client, cid = await start(daemon_factory, fake_provider)
    await assert_auth_failed_without_leak(fake_provider, d, client, cid, secret)
    await client.close()


async def test_missing_key_fails_before_calling_the_provider(
    fake_provider: FakeProvider,
    daemon_factory: Callable[..., Daemon],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(API_KEY_ENV)
    _d, client, cid = await start(daemon_factory, fake_provider)
    notes = await run_turn(client, cid, "hello")
    ended = notes[-1]["params"]
    assert ended["status"] == "failed" and ended["error"]["kind"] == "auth_failed"
    assert f"set the environment variable {API_KEY_ENV}" in ended["error"]["message"]
    assert methods(notes, "retry/scheduled") == []
    assert fake_provider.requests == []
    await client.close()


async def test_revoked_key_named_by_the_provider_is_never_repeated(
    fast: Setup, fast_daemon: Shared
) -> None:
    # The provider says the (correctly sent) key was revoked and names it in its message.
    fake, client, cid = fast
    assert fake.api_key is not None
    fake.enqueue(Reply.unauthorized(f"The API key {fake.api_key} has been revoked"))
    await assert_auth_failed_without_leak(fake, fast_daemon[1], client, cid, fake.api_key)


async def test_context_overflow_fails_without_retry(fast: Setup) -> None:
    fake, client, cid = fast
    # A first message: there is no older history that compaction could summarize, so the
    # overflow is final after one request.
    fake.enqueue(Reply.context_overflow())
    notes = await run_turn(client, cid, "a very long prompt")
    ended = notes[-1]["params"]
    assert ended["status"] == "failed" and ended["error"]["kind"] == "context_overflow"
    assert methods(notes, "retry/scheduled") == []
    assert len(fake.requests) == 1


# -- interrupts --------------------------------------------------------------------------------


async def test_interrupt_mid_stream_keeps_the_partial_answer(fast: Setup) -> None:
    fake, client, cid = fast
    fake.enqueue(Reply().text("Half of my ", "answer").hang())
    await send(client, cid, "tell me a long story")
    notes = await until_streamed(client, "agent_message", "Half of my answer")
    [request] = fake.requests
    assert not request.disconnected.is_set()
    result = await client.request("turn/interrupt", {"conversationId": cid})
    assert result == {"interrupted": True}
    # Without the interrupt the stream would never end: the turn ending at all is the check (a
    # clock around it failed on a loaded machine).
    ended = await collect_until(client, turn_ended(), timeout=20)
    notes += ended
    assert ended[-1]["params"]["status"] == "interrupted"
    assert await request.wait_disconnected()  # the provider stops generating
    items = await read_items(client, cid)
    assert [i["type"] for i in items] == ["user_message", "agent_message", "notice"]
    partial = items[1]
    assert partial["text"] == "Half of my answer" and partial["status"] == "interrupted"
    assert items[2]["text"] == INTERRUPT_NOTICE

    fake.enqueue(Reply().text("Continuing."))
    notes = await run_turn(client, cid, "go on")
    assert notes[-1]["params"]["status"] == "completed"
    follow_up = fake.requests[1]
    assert INTERRUPT_NOTICE in request_text(follow_up)
    assert "Half of my answer" in request_text(follow_up)


async def test_interrupt_during_retry_wait_ends_it_promptly(patient: Setup) -> None:
    fake, client, cid = patient
    fake.enqueue(Reply.rate_limited(retry_after=30))
    await send(client, cid, "please wait")
    notes = await collect_until(client, method_is("retry/scheduled"))
    assert notes[-1]["params"]["delaySeconds"] == 30
    await client.request("turn/interrupt", {"conversationId": cid})
    # Within 20 s: not the 30 s the provider asked for (the wait's own limit tells them apart).
    ended = await collect_until(client, turn_ended(), timeout=20)
    assert ended[-1]["params"]["status"] == "interrupted"
    items = await read_items(client, cid)
    assert [i["type"] for i in items] == ["user_message", "notice"]

    # The session is not wedged: the next message gets an answer at once.
    fake.enqueue(Reply().text("Here now."))
    notes = await run_turn(client, cid, "again")
    assert notes[-1]["params"]["status"] == "completed"
    assert completed_items(notes, "agent_message")[0]["text"] == "Here now."
    # No retry after the interrupt, then or since: the only other request is the next turn's.
    assert len(fake.requests) == 2, [request_text(q) for q in fake.requests]
    assert "again" in request_text(fake.requests[1])
