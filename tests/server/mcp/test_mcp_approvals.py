"""The approval rule for MCP tools: ask at least once per conversation and tool unless trusted."""

from __future__ import annotations

from openvaala_server.domain.approvals import Ask, Run
from openvaala_server.domain.mcp_approvals import decide_mcp

TOOL = "mcp__files__read"


def test_an_untrusted_servers_tool_asks_until_allowed_for_the_conversation() -> None:
    for approval in ("escalate", "always"):
        decision = decide_mcp(approval, TOOL, "files", trust=False, granted=())
        assert isinstance(decision, Ask)
        assert "MCP server 'files' is not trusted" in decision.reason
        assert not decision.outside_sandbox
        assert decide_mcp(approval, TOOL, "files", trust=False, granted={TOOL}) == Run()
        # A grant covers only the tool it was given for.
        other = decide_mcp(approval, "mcp__files__write", "files", trust=False, granted={TOOL})
        assert isinstance(other, Ask)


def test_a_trusted_server_or_an_agent_never_asked_runs_at_once() -> None:
    assert decide_mcp("always", TOOL, "files", trust=True, granted=()) == Run()
    assert decide_mcp("never", TOOL, "files", trust=False, granted=()) == Run()
