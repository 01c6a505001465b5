"""`openvaala/prompt` and friends through `openvaala lsp`, once as Neovim and once as VS Code."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.lsp.harness import PACED_CONFIG, Recorder, capabilities, request, start_lsp, stop_lsp
from tests.support.errors import error_data
from tests.support.waits import WAIT_S


async def _new(client: LanguageClient) -> str:
    new = await request(client, "openvaala/conversations/new", {})
    assert new["uri"] == f"openvaala://conversation/{new['conversation']['conversationId']}"
    return str(new["conversation"]["conversationId"])


async def test_prompt_streams_events_and_resolves_with_status_and_usage(
    lsp: tuple[LanguageClient, Recorder],
) -> None:
    client, rec = lsp
    cid = await _new(client)
    result = await request(client, "openvaala/prompt", {"conversationId": cid, "text": "hello"})

    assert result["status"] == "completed"
    assert result["usage"]["used"] > 0
    assert result["usage"]["source"] == "reported"
    assert result["usage"]["contextWindow"] == 32000
    events = [e for e in rec.events if e["conversationId"] == cid]
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    # Forwarded unchanged: the daemon's params, seq included.
    assert all(e["params"]["seq"] == e["seq"] for e in events)
    methods = [e["method"] for e in events]
    assert methods.index("turn/started") < methods.index("item/delta") < methods.index("turn/ended")
    streamed = "".join(e["params"]["delta"] for e in events if e["method"] == "item/delta")
    assert "You said: “hello”" in streamed
    ended = next(e for e in events if e["method"] == "turn/ended")
    assert ended["params"]["turnId"] == result["turnId"]
    # The status-line report followed the usage as it changed.
    await rec.until(lambda: any(u["used"] == result["usage"]["used"] for u in rec.usage))
    last = rec.usage[-1]
    assert last["conversationId"] == cid and last["root"] is True
    assert last["text"].endswith("reported)") and "/32k" in last["text"]
    # Pushed on change only: never the same report twice in a row.
    pairs = zip(rec.usage, rec.usage[1:], strict=False)
    assert all((a["used"], a["source"]) != (b["used"], b["source"]) for a, b in pairs)

    # The same as a request, for a status line that asks.
    usage = await request(client, "openvaala/usage", {"conversationId": cid})
    assert usage["used"] == result["usage"]["used"]


async def test_cancel_request_interrupts_the_turn(editor: str, daemon_factory: Any) -> None:
    daemon = daemon_factory(config=PACED_CONFIG)
    client, rec, _ = await start_lsp(daemon, capabilities(editor))
    try:
        cid = await _new(client)
        prompt = asyncio.ensure_future(
            client.protocol.send_request_async(
                "openvaala/prompt",
                {"conversationId": cid, "text": "a long answer please"},
                msg_id="prompt-1",
            )
        )
        await rec.until(lambda: "item/delta" in rec.methods(cid))
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="prompt-1"))
        result = (await asyncio.wait_for(prompt, WAIT_S))._asdict()
        assert result["status"] == "interrupted"
        assert "turn/ended" in rec.methods(cid)
        items = [e["params"]["item"] for e in rec.events if e["method"] == "item/completed"]
        assert any(i["type"] == "agent_message" and i["status"] == "interrupted" for i in items)
    finally:
        await stop_lsp(client)


async def test_turn_progress_and_cancelling_it_interrupts(editor: str, daemon_factory: Any) -> None:
    daemon = daemon_factory(config=PACED_CONFIG)
    client, rec, _ = await start_lsp(daemon, capabilities(editor))
    try:
        cid = await _new(client)
        sent = await request(
            client, "openvaala/send", {"conversationId": cid, "text": "first", "mode": "queue"}
        )
        assert sent["disposition"] == "started"
        await rec.until(lambda: any(r for r in client.progress_reports.values()))
        token = next(iter(client.progress_reports))
        await rec.until(
            lambda: any(
                isinstance(r, types.WorkDoneProgressReport) for r in client.progress_reports[token]
            )
        )
        begin = client.progress_reports[token][0]
        assert isinstance(begin, types.WorkDoneProgressBegin) and begin.cancellable
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        await rec.until(
            lambda: isinstance(client.progress_reports[token][-1], types.WorkDoneProgressEnd)
        )
        end = client.progress_reports[token][-1]
        assert end.message == "interrupted"
    finally:
        await stop_lsp(client)


async def test_waiting_input_edit_and_jump_interrupt_agents_and_listing(
    daemon_factory: Any,
) -> None:
    daemon = daemon_factory(config=PACED_CONFIG)
    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        cid = await _new(client)
        first = await request(client, "openvaala/send", {"conversationId": cid, "text": "one"})
        assert first["disposition"] == "started"
        waiting = await request(
            client, "openvaala/send", {"conversationId": cid, "text": "two", "mode": "queue"}
        )
        assert waiting["disposition"] == "queued"
        edited = {"action": "edit", "inputId": waiting["inputId"], "text": "two, edited"}
        await request(client, "openvaala/input", edited)
        await rec.until(
            lambda: any(
                e["method"] == "inbox/updated"
                and [i["text"] for i in e["params"]["inputs"]] == ["two, edited"]
                for e in rec.events
            )
        )
        await request(client, "openvaala/input", {"action": "jump", "inputId": waiting["inputId"]})
        ended = await rec.until(
            lambda: (
                [e["params"]["status"] for e in rec.events if e["method"] == "turn/ended"][:2]
                if rec.methods(cid).count("turn/ended") >= 2
                else None
            )
        )
        assert ended == ["interrupted", "completed"]
        with pytest.raises(JsonRpcException) as failed:
            await request(
                client, "openvaala/input", {"action": "withdraw", "inputId": waiting["inputId"]}
            )
        assert failed.value.code == -32007
        assert error_data(failed.value)["kind"] == "input_consumed"
        interrupted = await request(client, "openvaala/interrupt", {"conversationId": cid})
        assert interrupted == {"interrupted": False}

        listed = await request(client, "openvaala/conversations/list", {})
        assert [c["conversationId"] for c in listed["conversations"]] == [cid]
        assert listed["conversations"][0]["uri"].endswith(cid)
        tree = await request(client, "openvaala/agents", {"conversationId": cid})
        assert len(tree["sessions"]) == 1 and tree["sessions"][0]["children"] == []
        configured = await request(client, "openvaala/agents", {})
        assert [a["name"] for a in configured["agents"]] == ["default"]
    finally:
        await stop_lsp(client)
