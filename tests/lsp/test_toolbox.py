"""The toolbox through the editor bridge (pytest-lsp, a real daemon): the agent's plan reaches the
editor as an event and as a checklist in the transcript document, an apply_patch result is a
```diff block, and `openvaala.mcp` lists the MCP servers' state (a real SDK server, one that
cannot run) and shows it to the user."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types

from tests.fakes.providers import FakeProvider
from tests.lsp.harness import capabilities, command, request, start_lsp, stop_lsp
from tests.support.daemon import Daemon
from tests.support.toolbox import ORIGINAL, plan_and_patch, toolbox_config


@pytest.mark.timeout(180)
async def test_plan_diff_and_mcp_in_the_editor(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    daemon: Daemon = daemon_factory(config=toolbox_config(fake_openai))
    (daemon.workdir / "greet.py").write_text(ORIGINAL)
    plan_and_patch(fake_openai)
    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        new = await request(client, "openvaala/conversations/new", {})
        cid = new["conversation"]["conversationId"]
        result = await request(
            client, "openvaala/prompt", {"conversationId": cid, "text": "fix greet"}
        )
        assert result["status"] == "completed"
        [event] = [e for e in rec.events if e["method"] == "plan/updated"]
        assert event["params"]["plan"]["steps"][1]["status"] == "in_progress"

        text = (await request(client, "openvaala/render", {"uri": new["uri"]}))["text"]
        assert "## Plan 1/3\n\n_Small fix_\n\n- [x] Read the code\n" in text
        assert "- [ ] **Patch greet.py** _(in progress)_\n- [ ] Run the tests\n" in text
        assert "_changed_ `greet.py`\n```diff\ndiff --git a/greet.py b/greet.py\n" in text
        assert "-    return 'hi'\n+    return 'hello'\n```" in text

        listed = await command(client, "openvaala.mcp")
        by_name = {s["name"]: s for s in listed["servers"]}
        assert by_name["t"]["status"] == "ready" and "echo" in by_name["t"]["tools"]
        assert by_name["gone"]["status"] == "failed"
        assert "t: ready, " in listed["text"]
        assert "gone: failed: cannot run 'openvaala-no-such-mcp-server'" in listed["text"]
        shown = [m for m in client.messages if m.message == listed["text"]]
        assert shown and shown[0].type == types.MessageType.Warning
    finally:
        await stop_lsp(client)
