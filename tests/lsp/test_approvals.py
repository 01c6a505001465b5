"""Approvals through the editor bridge, against the real daemon: an agent configured
`approval = "always"` asks before `run: echo hi`; the editor answers from the prompt
(window/showMessageRequest), from its plugin's command, or another client answers first."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from tests.lsp.harness import Recorder, capabilities, command, request, start_lsp, stop_lsp
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.events import collect_until, method_is, new_conversation

ALWAYS_ASK = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
approval = "always"
"""
GRANT = "Allow for this conversation: shell: exactly the command `echo hi`; nothing else"
ANSWERS = ["Allow once", GRANT, "Deny"]


async def _ask(client: LanguageClient, rec: Recorder) -> tuple[str, dict[str, Any]]:
    """A new conversation whose turn waits for approval of `echo hi`: (its id, the request)."""
    new = await request(client, "openvaala/conversations/new", {})
    cid = new["conversation"]["conversationId"]
    sent = await request(client, "openvaala/send", {"conversationId": cid, "text": "run: echo hi"})
    assert sent["disposition"] == "started"
    told = await rec.until(
        lambda: [a for a in rec.approvals_requested if a["conversationId"] == cid]
    )
    return cid, told[0]


async def _ended(rec: Recorder, cid: str) -> dict[str, Any]:
    """The turn's end, and the shell call's result."""
    await rec.until(lambda: "turn/ended" in rec.methods(cid))
    results = [
        e["params"]["item"]
        for e in rec.events
        if e["conversationId"] == cid
        and e["method"] == "item/completed"
        and e["params"]["item"]["type"] == "tool_result"
    ]
    assert len(results) == 1
    result: dict[str, Any] = results[0]
    return result


async def _awaiting(rec: Recorder, sid: str) -> None:
    """Until the editor has the session's "awaiting_approval" status (it follows the request)."""
    await rec.until(
        lambda: any(
            e["method"] == "session/updated"
            and e["params"]["session"]["sessionId"] == sid
            and e["params"]["session"]["status"] == "awaiting_approval"
            for e in rec.events
        )
    )


async def _render(client: LanguageClient, cid: str) -> str:
    rendered = await request(client, "openvaala/render", {"uri": f"openvaala://conversation/{cid}"})
    return str(rendered["text"])


async def test_allow_once_from_the_prompt_runs_the_command(
    editor: str, daemon_factory: Any
) -> None:
    daemon: Daemon = daemon_factory(config=ALWAYS_ASK)
    client, rec, _ = await start_lsp(daemon, capabilities(editor))
    try:
        cid, told = await _ask(client, rec)
        assert told["tool"] == "shell" and told["agent"] == "default"
        assert told["summary"] == "echo hi" and told["uri"] == f"openvaala://conversation/{cid}"
        prompt, answer = (await rec.until(lambda: rec.prompts))[0]
        assert prompt.message.startswith("OpenVaala: default wants to use shell: echo hi\n")
        assert told["reason"] in prompt.message
        assert [a.title for a in prompt.actions or []] == ANSWERS
        # While it waits, the transcript says so and shows the request.
        await _awaiting(rec, told["sessionId"])
        text = await _render(client, cid)
        assert "> **awaiting approval**" in text and "## Awaiting approval" in text

        answer.set_result(types.MessageActionItem(title="Allow once"))
        result = await _ended(rec, cid)
        assert result["output"].splitlines()[0] == "hi" and not result.get("isError")
        resolved = await rec.until(lambda: rec.approvals_resolved)
        assert resolved == [
            {
                "conversationId": cid,
                "approvalId": told["approvalId"],
                "decision": "allow",
                "sessionId": told["sessionId"],
                "seq": resolved[0]["seq"],
            }
        ]
        assert "## Awaiting approval" not in await _render(client, cid)
        assert len(rec.prompts) == 1 and client.messages == []
    finally:
        await stop_lsp(client)


async def test_deny_from_the_prompt_tells_the_model(daemon_factory: Any, tmp_path: Any) -> None:
    daemon: Daemon = daemon_factory(config=ALWAYS_ASK)
    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        cid, _ = await _ask(client, rec)
        _, answer = (await rec.until(lambda: rec.prompts))[0]
        answer.set_result(types.MessageActionItem(title="Deny"))
        result = await _ended(rec, cid)
        assert result["isError"] is True
        assert "denied" in result["output"] and "hi" not in result["output"].split()
        assert rec.approvals_resolved[-1]["decision"] == "deny"
    finally:
        await stop_lsp(client)


async def test_a_plugin_answers_through_the_command_with_a_message(
    editor: str, daemon_factory: Any
) -> None:
    daemon: Daemon = daemon_factory(config=ALWAYS_ASK)
    client, rec, _ = await start_lsp(daemon, capabilities(editor), options={"approvals": "plugin"})
    try:
        cid, told = await _ask(client, rec)
        assert [a["decision"] for a in told["answers"]] == ["allow", "allow_conversation", "deny"]
        listed = await command(client, "openvaala.approvals", cid)
        assert [a["approvalId"] for a in listed["approvals"]] == [told["approvalId"]]
        answered = await command(
            client,
            "openvaala.respondApproval",
            {
                "conversationId": cid,
                "approvalId": told["approvalId"],
                "decision": "deny",
                "message": "not in this repo",
            },
        )
        assert answered == {"approvalId": told["approvalId"], "decision": "deny"}
        result = await _ended(rec, cid)
        assert result["isError"] is True and "not in this repo" in result["output"]
        resolved = rec.approvals_resolved[-1]
        assert resolved["decision"] == "deny" and resolved["message"] == "not in this repo"
        # The plugin asks the user itself: the bridge never prompted.
        assert rec.prompts == []
        # Answering again is a clear error, and so is a decision the daemon does not know.
        with pytest.raises(JsonRpcException) as again:
            await command(client, "openvaala.respondApproval", cid, told["approvalId"], "allow")
        assert error_data(again.value)["kind"] == "already_resolved"
        assert "already answered (deny)" in again.value.message
        with pytest.raises(JsonRpcInvalidParams) as unknown:
            await command(client, "openvaala.respondApproval", cid, told["approvalId"], "maybe")
        assert unknown.value.message == (
            "decision must be one of allow, allow_conversation, deny, not 'maybe'"
        )
    finally:
        await stop_lsp(client)


async def test_answered_from_another_client_the_editor_is_told(daemon_factory: Any) -> None:
    daemon: Daemon = daemon_factory(config=ALWAYS_ASK)
    client, rec, _ = await start_lsp(daemon, capabilities("visual-studio-code"))
    python = await daemon.client("other")
    try:
        cid, told = await _ask(client, rec)
        _, answer = (await rec.until(lambda: rec.prompts))[0]
        await python.respond_approval(cid, told["approvalId"], "allow")
        resolved = await rec.until(lambda: rec.approvals_resolved)
        assert resolved[0]["approvalId"] == told["approvalId"]
        assert resolved[0]["decision"] == "allow"
        result = await _ended(rec, cid)
        assert result["output"].splitlines()[0] == "hi"
        # The prompt could not be withdrawn; answering it late is one short message.
        answer.set_result(types.MessageActionItem(title="Deny"))
        shown = await rec.until(lambda: client.messages)
        assert [(m.type, m.message) for m in shown] == [
            (types.MessageType.Info, "OpenVaala: that approval was already answered (allowed).")
        ]
    finally:
        await python.close()
        await stop_lsp(client)


async def test_a_dismissed_prompt_stays_pending_and_a_lens_answers_it(
    daemon_factory: Any,
) -> None:
    daemon: Daemon = daemon_factory(config=ALWAYS_ASK)
    client, rec, _ = await start_lsp(daemon, capabilities("visual-studio-code"))
    try:
        cid, told = await _ask(client, rec)
        _, answer = (await rec.until(lambda: rec.prompts))[0]
        answer.set_result(None)
        listed = await request(client, "openvaala/approvals", {"conversationId": cid})
        assert [a["approvalId"] for a in listed["approvals"]] == [told["approvalId"]]
        uri = f"openvaala://conversation/{cid}"
        await _render(client, cid)
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        allow = [
            lens.command
            for lens in lenses or []
            if lens.command and lens.command.title == "Allow once"
        ]
        assert len(allow) == 1 and allow[0] is not None
        await command(client, allow[0].command, *(allow[0].arguments or []))
        result = await _ended(rec, cid)
        assert result["output"].splitlines()[0] == "hi"
        assert rec.approvals_resolved[-1]["decision"] == "allow" and client.messages == []
    finally:
        await stop_lsp(client)


async def test_a_request_pending_before_the_editor_watches_is_asked(daemon_factory: Any) -> None:
    daemon: Daemon = daemon_factory(config=ALWAYS_ASK)
    python = await daemon.client("other")
    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        cid = await new_conversation(python, str(daemon.workdir))
        await python.request(
            "input/send", {"conversationId": cid, "text": "run: echo hi", "mode": "queue"}
        )
        waiting = (await collect_until(python, method_is("approval/requested")))[-1]["params"]
        # The editor opens the conversation after the request went out: the snapshot has it.
        await request(client, "openvaala/subscribe", {"conversationId": cid})
        told = await rec.until(lambda: rec.approvals_requested)
        assert [t["approvalId"] for t in told] == [waiting["approvalId"]]
        prompt, answer = (await rec.until(lambda: rec.prompts))[0]
        assert prompt.message.startswith("OpenVaala: default wants to use shell: echo hi")
        answer.set_result(types.MessageActionItem(title=GRANT))
        result = await _ended(rec, cid)
        assert result["output"].splitlines()[0] == "hi"
        assert rec.approvals_resolved[-1]["decision"] == "allow_conversation"
        assert len(rec.prompts) == 1
    finally:
        await python.close()
        await stop_lsp(client)


async def test_an_interrupt_denies_what_waits(daemon_factory: Any) -> None:
    daemon: Daemon = daemon_factory(config=ALWAYS_ASK)
    client, rec, _ = await start_lsp(
        daemon, capabilities("neovim"), options={"approvals": "plugin"}
    )
    try:
        cid, told = await _ask(client, rec)
        await request(client, "openvaala/interrupt", {"conversationId": cid})
        resolved = await rec.until(lambda: rec.approvals_resolved)
        assert resolved[0]["approvalId"] == told["approvalId"]
        assert resolved[0]["decision"] == "deny"
        await rec.until(lambda: "turn/ended" in rec.methods(cid))
        assert (await request(client, "openvaala/approvals", {}))["approvals"] == []
        assert "## Awaiting approval" not in await _render(client, cid)
    finally:
        await stop_lsp(client)


SUBAGENT_ASKS = """
default_agent = "main"

[models.demo]
provider = "demo"
pace_ms = 0

[agents.worker]
description = "Asks first"
approval = "always"

[agents.main]
description = "Root"
model = "demo"
"""


async def test_a_subagents_request_names_the_subagent(daemon_factory: Any) -> None:
    daemon: Daemon = daemon_factory(config=SUBAGENT_ASKS)
    client, rec, _ = await start_lsp(daemon, capabilities("visual-studio-code"))
    try:
        new = await request(client, "openvaala/conversations/new", {})
        cid = new["conversation"]["conversationId"]
        await request(
            client,
            "openvaala/send",
            {"conversationId": cid, "text": "spawn: run: echo from-worker"},
        )
        prompt, answer = (await rec.until(lambda: rec.prompts))[0]
        assert prompt.message.startswith("OpenVaala: worker wants to use shell: echo from-worker")
        told = rec.approvals_requested[0]
        # The root transcript shows the subagent waiting, and its request.
        await _awaiting(rec, told["sessionId"])
        text = await _render(client, cid)
        assert "### ↳ worker — awaiting approval" in text
        assert "### ⚠ worker wants to use shell" in text
        answer.set_result(types.MessageActionItem(title="Allow once"))
        await rec.until(
            lambda: any(
                e["method"] == "turn/ended" and e["params"]["sessionId"] == told["sessionId"]
                for e in rec.events
            )
        )
        outputs = [
            e["params"]["item"]["output"]
            for e in rec.events
            if e["method"] == "item/completed"
            and e["params"]["item"]["type"] == "tool_result"
            and e["params"]["sessionId"] == told["sessionId"]
        ]
        assert [o.splitlines()[0] for o in outputs] == ["from-worker"]
    finally:
        await stop_lsp(client)
