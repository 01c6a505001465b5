"""The full usage estimate of a request (what usage shows before the provider reports): system
prompt and tool schemas from the first message on, and the reasoning the provider keeps in
context, by the mode it applied — also after a restart, when only the history is left."""

from __future__ import annotations

from openvaala_server.domain.context import (
    estimate_request,
    reasoning_context,
    stamped_reasoning_context,
)
from openvaala_server.domain.records import Item
from openvaala_server.domain.usage import (
    MESSAGE_OVERHEAD_TOKENS,
    UsageTracker,
    estimate_item,
    estimate_text,
    estimate_tool,
)
from openvaala_server.models.base import ToolSpec
from openvaala_server.protocol.json_types import JsonObject

SYSTEM = "You are a careful coding agent. " * 40
SHELL = ToolSpec(
    "shell",
    "Run a shell command in the working directory and return its output.",
    {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The command to run."}},
        "required": ["command"],
    },
)


def user(text: str, turn: str) -> Item:
    return {"type": "user_message", "text": text, "turnId": turn, "status": "completed"}


def thought(text: str, turn: str, mode: str | None = None) -> Item:
    data: JsonObject = {"provider": "openai_responses", "id": f"rs_{turn}"}
    if mode is not None:
        data["reasoningContext"] = mode
    return {
        "type": "reasoning",
        "text": text,
        "turnId": turn,
        "status": "completed",
        "providerData": data,
    }


def answer(text: str, turn: str) -> Item:
    return {"type": "agent_message", "text": text, "turnId": turn, "status": "completed"}


def test_the_first_message_is_counted_with_the_system_prompt_and_tool_schemas() -> None:
    first = [user("hello", "t1")]
    estimate = estimate_request(SYSTEM, [SHELL], first, provider="openai")
    assert estimate == estimate_text(SYSTEM) + estimate_tool(SHELL) + estimate_item(first[0])
    # The schema is what the request carries: name, description and the JSON schema.
    assert estimate_tool(SHELL) > MESSAGE_OVERHEAD_TOKENS + estimate_text(SHELL.description)
    # A tracker seeded with it (as a new session's is) shows it before any report.
    usage = UsageTracker(context_window=32_000, max_output_tokens=1_000)
    usage.reset_estimate(estimate_request(SYSTEM, [SHELL], [], provider="openai"))
    usage.add(first[0])
    assert usage.used == estimate and usage.to_wire()["source"] == "estimated"


def test_every_tool_schema_counts() -> None:
    other = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}})
    one = estimate_request("", [SHELL], [], provider="anthropic")
    both = estimate_request("", [SHELL, other], [], provider="anthropic")
    assert both == one + estimate_tool(other) > one


# Two finished turns with reasoning, as an openai_responses model left them.
HISTORY = [
    user("plan it", "t1"),
    thought("x" * 4000, "t1", "current_turn"),
    answer("Planned.", "t1"),
    user("do it", "t2"),
    thought("y" * 400, "t2", "current_turn"),
    answer("Done.", "t2"),
]


def test_current_turn_reasoning_leaves_earlier_turns_thoughts_out() -> None:
    estimate = estimate_request("", [], HISTORY, provider="openai_responses")
    assert estimate == sum(estimate_item(i) for i in HISTORY if i["turnId"] == "t2") + sum(
        estimate_item(i) for i in HISTORY[:3] if i["type"] != "reasoning"
    )


def test_the_applied_mode_survives_a_restart_through_the_history() -> None:
    """Before a restart the mode is what the provider last reported; after it, only the
    history is left: the stamp on the latest reasoning item gives the same estimate."""
    config_says = "all_turns"  # requested, but the provider applied current_turn
    before = estimate_request(
        "",
        [],
        HISTORY,
        provider="openai_responses",
        reported_context="current_turn",
        configured_context=config_says,
    )
    after = estimate_request(
        "", [], HISTORY, provider="openai_responses", configured_context=config_says
    )
    assert after == before
    everything = sum(estimate_item(i) for i in HISTORY)
    assert after < everything - 900  # the earlier turn's 4000 characters of reasoning are out


def test_the_mode_is_resolved_reported_then_stamped_then_configured_then_default() -> None:
    stamped = [thought("a", "t1", "all_turns"), thought("b", "t2")]  # the newest is unstamped
    assert stamped_reasoning_context(stamped) == "all_turns"
    assert stamped_reasoning_context([thought("a", "t1", "bogus")]) is None
    assert reasoning_context(stamped, "openai_responses", "current_turn", None) == "current_turn"
    assert reasoning_context(stamped, "openai_responses", None, "current_turn") == "all_turns"
    assert reasoning_context([], "openai_responses", None, "all_turns") == "all_turns"
    assert reasoning_context([], "openai_responses", None, None) == "current_turn"
    assert reasoning_context([], "anthropic", None, None) is None


def test_all_turns_keeps_every_thought_and_chat_keeps_none() -> None:
    stamped_all = [i.copy() for i in HISTORY]
    for item in stamped_all:
        if item["type"] == "reasoning":
            item["providerData"] = {**item["providerData"], "reasoningContext": "all_turns"}
    everything = sum(estimate_item(i) for i in HISTORY)
    assert estimate_request("", [], stamped_all, provider="openai_responses") == everything
    no_reasoning = sum(estimate_item(i) for i in HISTORY if i["type"] != "reasoning")
    assert estimate_request("", [], HISTORY, provider="openai") == no_reasoning
