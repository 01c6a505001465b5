"""MCP from the Neovim composer, in a headless Neovim against the real daemon and a real SDK-built
MCP server: `:OpenVaalaResource` offers the ready server's resources (vim.ui.select) and puts
the mention in the composer, whose message then carries the resource's text; `:OpenVaalaPrompt`
offers its prompts, and the filled-in command is sent as the server's prompt; a malformed command
is refused with the reason and stays in the composer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.lsp.nvim_support import needs_nvim, run_driver
from tests.server.mcp.conftest import daemon_config
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn


def _user_texts(fake: FakeProvider) -> list[str]:
    return [
        str(m["content"]) for r in fake.requests for m in r.json["messages"] if m["role"] == "user"
    ]


@pytest.mark.timeout(180)
@needs_nvim
async def test_neovim_attaches_mcp_resources_and_runs_mcp_prompts(
    daemon_factory: Any, fake_openai: FakeProvider, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(
        config=daemon_config(fake_openai, extra="startup_timeout_s = 45\n")
    )
    # A first turn calls the server, so it is ready (with its resources and prompts) after it.
    fake_openai.enqueue(
        Reply().tool_call("mcp__t__echo", {"text": "hi"}),
        Reply().text("ok"),
        Reply().text("noted"),
        Reply().text("reviewed"),
    )
    python = await daemon.client(reconnect=False)
    try:
        cid = await new_conversation(python, str(daemon.workdir))
        notes = await run_turn(python, cid, "start")
        assert notes[-1]["params"]["status"] == "completed"
    finally:
        await python.close()

    result, log = await run_driver(daemon, tmp_path, "nvim_mcp_driver.lua", cid)
    assert "error" not in result, (result, log)
    # The composer's omnifunc completes the prompt, its arguments as the hint.
    assert result["omnifunc"] == "require'openvaala.mcp'.complete"
    assert result["completion"] == {
        "start": 0,
        "items": [
            {
                "word": "/mcp__t__review ",
                "abbr": "/mcp__t__review",
                "menu": "file=",
                "info": "Ask for a review of one file.",
            }
        ],
    }
    assert result["no_completion"] == -3
    resources, prompts = result["selects"]
    assert resources == {"prompt": "MCP resource:", "items": ["@t:notes://today  today"]}
    assert prompts == {
        "prompt": "MCP prompt:",
        "items": ["/mcp__t__review  Ask for a review of one file."],
    }
    assert result["with_resource"] == ["plan my day @t:notes://today "]
    assert result["with_prompt"] == ["/mcp__t__review file="]
    sent = _user_texts(fake_openai)
    assert (
        "plan my day @t:notes://today\n\n```t:notes://today\nWater the ficus at noon.\n```" in sent
    )
    assert "Review my app.py for bugs, briefly." in sent
    assert '/mcp__t__review file="my app.py"' not in sent
    # Refused: the reason shown, the text kept, nothing more sent.
    assert any("arguments are name=value, not 'file'" in m for m in result["notified"])
    assert result["after_refusal"] == ["/mcp__t__review file"]
    assert not any(t.startswith("/mcp__") for t in sent)
