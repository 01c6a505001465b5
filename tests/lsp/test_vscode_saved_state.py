"""What the VS Code extension keeps of the chat panel's state in the workspace's state
(editors/vscode/saved_state.js, run in node): the page is not trusted, so only well-formed ids,
drafts and cut replies are kept, without extra fields, within bounds, the conversation on screen
first (docs/editors.md, "The chat panel")."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

SAVED_STATE = Path(__file__).resolve().parents[2] / "editors" / "vscode" / "saved_state.js"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is missing")

A, B, S, T = "a" * 32, "b" * 32, "5" * 32, "7" * 32


def saved(*states: Any) -> list[Any]:
    """savedState of each of `states`, as the extension computes it."""
    assert NODE is not None
    script = (
        f"const {{ savedState }} = require({json.dumps(str(SAVED_STATE))});"
        "const states = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(states.map(savedState)));"
    )
    done = subprocess.run(
        [NODE, "-e", script], input=json.dumps(states), capture_output=True, text=True, check=True
    )
    result: list[Any] = json.loads(done.stdout)
    return result


def reply(item_id: str, text: str, anchor: str | None = None, **extra: Any) -> dict[str, Any]:
    item = {"itemId": item_id, "type": "agent_message", "text": text, "turnId": T, **extra}
    return {"sessionId": S, "anchor": anchor, "item": item}


def test_cut_replies_are_kept_as_given_without_extra_fields() -> None:
    [kept] = saved({"cid": A, "drafts": {A: "draft"}, "cut": {A: [reply(B, "half", A, x=1)]}})
    assert kept == {"cid": A, "drafts": {A: "draft"}, "cut": {A: [reply(B, "half", A)]}}


def test_what_is_not_well_formed_is_dropped() -> None:
    bad = [
        {"cut": {"not-an-id": [reply(B, "half")]}},
        {"cut": {A: [reply("x", "half")]}},  # an item id that is not one
        {"cut": {A: [reply(B, "")]}},  # nothing to show
        {"cut": {A: [{**reply(B, "half"), "anchor": "<img>"}]}},
        {
            "cut": {
                A: [{**reply(B, "half"), "item": {"itemId": B, "type": "tool_call", "text": "x"}}]
            }
        },
        {"cut": {A: "<script>"}},
        {"cut": [reply(B, "half")]},
        {"cut": {A: [reply(B, "half"), None]}},  # one bad reply: none of that conversation's
    ]
    assert [s["cut"] for s in saved(*bad)] == [{}] * len(bad)
    assert saved(None, "x", {"cid": "../x"}) == [{"cid": None, "drafts": {}, "cut": {}}] * 3


def test_past_the_bounds_the_conversation_on_screen_keeps_its_cut_replies() -> None:
    big = "x" * (300 * 1024)  # two of them are past the 512 KiB of all cut replies
    [kept] = saved({"cid": B, "cut": {A: [reply(S, big)], B: [reply(S, big)]}})
    assert list(kept["cut"]) == [B]
    many = {f"{n:032x}": [reply(S, "half")] for n in range(30)}
    [kept] = saved({"cid": f"{29:032x}", "cut": many})
    assert len(kept["cut"]) == 20 and f"{29:032x}" in kept["cut"]
    too_many = [reply(f"{n:032x}", "half") for n in range(21)]  # of one conversation
    assert saved({"cut": {A: too_many}})[0]["cut"] == {}
