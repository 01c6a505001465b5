"""The editor bridge shows what "allow for this conversation" covers, and offers it only when the
daemon can grant it (docs/security.md, "Approvals"). Real daemon, `approval = "always"`."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from tests.lsp.harness import capabilities, request, start_lsp, stop_lsp
from tests.lsp.test_approvals import ALWAYS_ASK, _ended
from tests.support.daemon import Daemon


async def test_a_command_with_a_shell_operator_is_offered_once_only(daemon_factory: Any) -> None:
    daemon: Daemon = daemon_factory(config=ALWAYS_ASK)
    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        new = await request(client, "openvaala/conversations/new", {})
        cid = new["conversation"]["conversationId"]
        text = "run: echo one > lsp.txt"
        await request(client, "openvaala/send", {"conversationId": cid, "text": text})
        [told] = await rec.until(lambda: rec.approvals_requested)
        # Plugins are given the same answers: no "allow for this conversation".
        assert [a["decision"] for a in told["answers"]] == ["allow", "deny"]
        prompt, answer = (await rec.until(lambda: rec.prompts))[0]
        assert [a.title for a in prompt.actions or []] == ["Allow once", "Deny"]
        assert "Cannot be allowed for this conversation: the command uses a shell operator" in (
            prompt.message
        )
        rendered = await request(client, "openvaala/render", {"uri": told["uri"]})
        assert "Cannot be allowed for this conversation" in rendered["text"]
        answer.set_result(types.MessageActionItem(title="Allow once"))
        result = await _ended(rec, cid)
        assert not result.get("isError")
        assert rec.approvals_resolved[-1]["decision"] == "allow"
    finally:
        await stop_lsp(client)
