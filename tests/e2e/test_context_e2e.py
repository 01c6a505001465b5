"""Context and history through the daemon: automatic, overflow and manual compaction with a
scripted provider; fork and rewind; moving a conversation to another data directory."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.client import Client, RpcError
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.support.daemon import DEFAULT_CONFIG, Daemon
from tests.support.events import (
    collect_until,
    completed_items,
    new_conversation,
    run_turn,
    snapshot_of,
    turn_ended,
)

BIG = "x" * 2000  # about 500 tokens


def _config(fake: FakeProvider, window: int = 1000, max_out: int = 100) -> str:
    return (
        fake.config_toml("fake", context_window=window, max_output_tokens=max_out)
        + '\n[agents.default]\ndescription = "test agent"\nmodel = "fake"\n'
        + "base_instructions = false\n"  # a window this small is the base prompt's alone
        + "\n[retry]\nbase_delay_s = 0.01\nmax_delay_s = 0.05\nmax_retries = 1\n"
    )


def _messages(request: Any) -> list[dict[str, Any]]:
    return list(request.json["messages"])


def _system(request: Any) -> str:
    return str(_messages(request)[0]["content"])


def _texts(request: Any) -> list[str]:
    return [str(m.get("content")) for m in _messages(request) if m["role"] != "system"]


async def _setup(daemon_factory: Any, fake: FakeProvider, **kw: Any) -> tuple[Daemon, Client, str]:
    d: Daemon = daemon_factory(config=_config(fake, **kw))
    (d.workdir / "AGENTS.md").write_text("Always run the tests.")
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    return d, client, cid


async def test_compaction_happens_before_the_call_that_would_reach_the_threshold(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _setup(daemon_factory, fake_openai)
    fake_openai.enqueue(
        Reply().text("first answer").usage(300, 20),
        Reply().text("SUMMARY-ONE"),  # the compaction call
        Reply().text("second answer").usage(400, 20),
        Reply().text("SUMMARY-TWO"),
        Reply().text("third answer").usage(400, 20),
    )
    await run_turn(client, cid, "hello")
    assert len(fake_openai.requests) == 1  # 320 used: below the threshold of 800
    notes = await run_turn(client, cid, BIG)
    methods = [n["method"] for n in notes]
    assert methods.index("compaction/started") < methods.index("compaction/completed")
    requests = fake_openai.requests
    compaction, main = requests[1], requests[2]
    assert "working memory" in _system(compaction)
    assert "hello" in str(_texts(compaction)) and "first answer" in str(_texts(compaction))
    # The next request: instructions + AGENTS.md, the summary, then the kept tail.
    assert "Always run the tests." in _system(main)
    texts = _texts(main)
    assert "SUMMARY-ONE" in texts[0] and texts[-1] == BIG
    assert not any("first answer" in t for t in texts)
    usage = await client.request("conversation/usage", {"conversationId": cid})
    assert usage["source"] == "reported"
    # Cumulative: the second compaction summarizes the first summary too.
    await run_turn(client, cid, BIG + "y")
    assert "SUMMARY-ONE" in str(_texts(fake_openai.requests[3]))
    assert "SUMMARY-TWO" in _texts(fake_openai.requests[4])[0]
    # Every item stays readable, summaries included.
    items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
    kinds = [i["type"] for i in items]
    assert kinds.count("summary") == 2 and kinds.count("user_message") == 3
    assert [i["text"] for i in items if i["type"] == "agent_message"] == [
        "first answer",
        "second answer",
        "third answer",
    ]
    await client.close()


async def test_a_failed_compaction_fails_the_turn_and_changes_nothing(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _setup(daemon_factory, fake_openai)
    fake_openai.enqueue(Reply().text("first answer").usage(300, 20), Reply.bad_request("nope"))
    await run_turn(client, cid, "hello")
    notes = await run_turn(client, cid, BIG)
    assert notes[-1]["params"]["status"] == "failed"
    assert notes[-1]["params"]["error"]["kind"] == "compaction_failed"
    assert any(n["method"] == "compaction/failed" for n in notes)
    items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
    assert [i["type"] for i in items] == ["user_message", "agent_message", "user_message", "notice"]
    assert not any(i["type"] == "summary" for i in items)
    assert "compaction failed" in items[-1]["text"]
    await client.close()


async def test_overflow_compacts_and_retries_once(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _setup(daemon_factory, fake_openai)
    fake_openai.enqueue(
        Reply().text(BIG).usage(50, 10),
        Reply.context_overflow(),
        Reply().text("SUMMARY"),
        Reply().text("fits now").usage(100, 5),
        Reply.context_overflow(),
        Reply().text("SUMMARY AGAIN"),
        Reply.context_overflow(),
    )
    await run_turn(client, cid, "hello")
    notes = await run_turn(client, cid, "more")
    assert notes[-1]["params"]["status"] == "completed"
    assert "SUMMARY" in _texts(fake_openai.requests[3])[0]
    # Overflowing again after compacting: the turn fails plainly.
    notes = await run_turn(client, cid, "even more")
    assert notes[-1]["params"]["status"] == "failed"
    assert notes[-1]["params"]["error"]["kind"] == "context_overflow"
    await client.close()


async def test_manual_compaction_only_when_nothing_runs_or_waits(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _setup(daemon_factory, fake_openai, window=100_000, max_out=1000)
    gate = Gate()
    fake_openai.enqueue(
        Reply().text("one"),
        Reply().text("two").wait(gate),
        Reply().text("three"),
        Reply().text("MANUAL SUMMARY"),
    )
    await run_turn(client, cid, "first")
    await client.request("input/send", {"conversationId": cid, "text": "second", "mode": "queue"})
    await gate.wait_reached()
    with pytest.raises(RpcError) as err:
        await client.request("conversation/compact", {"conversationId": cid})
    assert err.value.kind == "not_idle"
    await client.request("input/send", {"conversationId": cid, "text": "third", "mode": "queue"})
    gate.open()
    await collect_until(client, turn_ended())
    await collect_until(client, turn_ended())
    result = await client.request("conversation/compact", {"conversationId": cid})
    assert result["compacted"] is True
    items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
    summary = items[-1]
    assert summary["type"] == "summary" and summary["text"] == "MANUAL SUMMARY"
    assert summary["reason"] == "manual"
    await client.close()


async def test_fork_and_rewind(daemon_factory: Any) -> None:
    d: Daemon = daemon_factory(config=DEFAULT_CONFIG)
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    await run_turn(client, cid, "first question")
    await run_turn(client, cid, "second question")
    await client.request("conversation/archive", {"conversationId": cid})
    original = (await client.request("conversation/read", {"conversationId": cid}))["items"]

    forked: Any = (await client.request("conversation/fork", {"conversationId": cid}))[
        "conversation"
    ]
    assert forked["conversationId"] != cid and not forked["archived"]
    assert forked["forkedFrom"]["conversationId"] == cid
    copy = await client.request("conversation/read", {"conversationId": forked["conversationId"]})
    assert strip(copy["items"]) == strip(original)
    # The fork goes on by itself: the original keeps its own history.
    await client.subscribe(forked["conversationId"])
    await run_turn(client, forked["conversationId"], "only in the fork")
    assert (await client.request("conversation/read", {"conversationId": cid}))["items"] == original

    second = next(i for i in original if i.get("text") == "second question")
    rewound = await client.request(
        "conversation/rewind", {"conversationId": cid, "messageId": second["itemId"]}
    )
    assert rewound["composerText"] == "second question"
    new_id = rewound["conversation"]["conversationId"]
    before = (await client.request("conversation/read", {"conversationId": new_id}))["items"]
    assert strip(before) == strip(original[: original.index(second)])
    # The original is untouched and the rewound one continues on its own.
    assert (await client.request("conversation/read", {"conversationId": cid}))["items"] == original
    await client.subscribe(new_id)
    await run_turn(client, new_id, "second question, better phrased")
    with pytest.raises(RpcError) as err:
        await client.request(
            "conversation/rewind", {"conversationId": cid, "messageId": original[1]["itemId"]}
        )
    assert err.value.kind == "invalid_params"  # an agent message is not the user's
    await client.close()


async def test_fork_of_a_running_conversation_copies_finished_turns_only(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _setup(daemon_factory, fake_openai, window=100_000, max_out=1000)
    gate = Gate()
    fake_openai.enqueue(Reply().text("done"), Reply().text("partial").wait(gate))
    await run_turn(client, cid, "finished turn")
    await client.request("input/send", {"conversationId": cid, "text": "running", "mode": "queue"})
    await gate.wait_reached()
    await client.request("input/send", {"conversationId": cid, "text": "queued", "mode": "queue"})
    forked: Any = (await client.request("conversation/fork", {"conversationId": cid}))[
        "conversation"
    ]
    snapshot = await snapshot_of(client, forked["conversationId"])
    [root] = snapshot["sessions"]
    assert [i.get("text") for i in root["items"]] == ["finished turn", "done"]
    assert root["inbox"] == [] and root["turn"] is None
    gate.open()
    await client.close()


async def test_fork_after_compaction_reads_older_history_from_its_original(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d, client, cid = await _setup(daemon_factory, fake_openai)
    fake_openai.enqueue(
        Reply().text("first answer").usage(300, 20),
        Reply().text("SUMMARY-ONE"),
        Reply().text("second answer").usage(400, 20),
    )
    await run_turn(client, cid, "hello")
    await run_turn(client, cid, BIG)
    original = (await client.request("conversation/read", {"conversationId": cid}))["items"]
    forked: Any = (await client.request("conversation/fork", {"conversationId": cid}))[
        "conversation"
    ]
    fid = forked["conversationId"]
    # On disk the fork holds only what its model sees...
    session_file = next(
        p for p in (d.home / "conversations" / fid).iterdir() if p.name != "metadata.jsonl"
    )
    assert "first answer" not in session_file.read_text()
    # ...but reading it shows the whole history.
    full = (await client.request("conversation/read", {"conversationId": fid}))["items"]
    assert [i.get("text") for i in full if i["type"] != "summary"] == [
        i.get("text") for i in original if i["type"] != "summary"
    ]
    # With the original gone, the fork still opens and says where its older history is.
    await client.request("conversation/delete", {"conversationId": cid})
    client2 = await d.client()
    page = (await client2.request("conversation/read", {"conversationId": fid}))["items"]
    assert page[0]["type"] == "notice" and cid in page[0]["text"]
    assert "second answer" in [i.get("text") for i in page]
    await client.close()
    await client2.close()


async def test_moving_a_conversation_to_another_machine(
    daemon_factory: Any, tmp_path: Path
) -> None:
    mine = '[models.mine]\nprovider = "demo"\npace_ms = 0\n'
    agent = '[agents.default]\ndescription = "x"\nmodel = "mine"\n'
    old: Daemon = daemon_factory(config=mine + agent, name="old")
    client = await old.client()
    project = tmp_path / "project"
    project.mkdir()
    cid = await new_conversation(client, str(project))
    await run_turn(client, cid, "remember the plan")
    before = (await client.request("conversation/read", {"conversationId": cid}))["items"]
    await client.close()
    old.stop()

    new: Daemon = daemon_factory(
        config='[models.other]\nprovider = "demo"\n', start=False, name="new"
    )
    (new.home / "conversations").mkdir(parents=True)
    shutil.copytree(old.home / "conversations" / cid, new.home / "conversations" / cid)
    report = new.cli("reindex")
    assert report.returncode == 0, report.stderr
    assert "1" in report.stdout
    new.start()
    client = await new.client()
    [row] = (await client.request("conversation/list"))["conversations"]
    assert row["conversationId"] == cid and row["title"] == "remember the plan"
    assert (await client.request("conversation/read", {"conversationId": cid}))["items"] == before
    await client.subscribe(cid)
    # The model it used is not configured here: say so, then let the user choose another.
    with pytest.raises(RpcError) as err:
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
    assert err.value.kind == "model_missing" and "other" in err.value.message
    await client.request("conversation/setModel", {"conversationId": cid, "model": "other"})
    notes = await run_turn(client, cid, "continue the plan")
    assert completed_items(notes, "agent_message")
    # Its working directory missing here: it reads, but refuses input.
    shutil.rmtree(project)
    with pytest.raises(RpcError) as err:
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
    assert err.value.kind == "cwd_missing"
    await client.close()


async def test_a_manual_compaction_can_be_interrupted(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    _d, client, cid = await _setup(daemon_factory, fake_openai, window=100_000, max_out=1000)
    fake_openai.enqueue(Reply().text("one"), Reply().text("two"), Reply().hang())
    await run_turn(client, cid, "first")
    await run_turn(client, cid, "second")
    compacting = asyncio.create_task(
        client.request("conversation/compact", {"conversationId": cid})
    )
    await collect_until(client, lambda n: n["method"] == "compaction/started")
    # Interrupt only once the summary was asked for: a request still on its way would otherwise
    # reach the provider later and take the reply scripted for the next turn.
    await fake_openai.wait_for_request(3, timeout=30)
    # The same connection is still answered while the compaction runs.
    assert (await client.request("turn/interrupt", {"conversationId": cid}))["interrupted"]
    assert await compacting == {"compacted": False, "reason": "interrupted"}
    notes = await collect_until(client, lambda n: n["method"] == "compaction/failed")
    assert notes[-1]["params"]["error"]["kind"] == "interrupted"
    items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
    assert not any(i["type"] == "summary" for i in items)
    assert fake_openai.pending == 0
    fake_openai.enqueue(Reply().text("three"))
    notes = await run_turn(client, cid, "third")
    assert notes[-1]["params"]["status"] == "completed"
    await client.close()


def strip(items: list[Any]) -> list[tuple[str, str, str | None]]:
    return [(i["itemId"], i["type"], i.get("text")) for i in items]
