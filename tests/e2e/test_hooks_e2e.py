"""Hooks through the real daemon (issue 34, point 9): `[[hooks]]` commands get the event as JSON
on stdin, run inside the agent's bubblewrap sandbox, and show their output in clients; a
pre_tool hook that exits non-zero blocks the call with its stderr as what the model reads; one
that hangs is killed at its time-out and the call is blocked, the turn going on."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import completed_items, new_conversation, run_turn

Factory = Callable[..., Daemon]

# Logs each event it is given, says whether it can read the daemon's token (the sandbox hides
# the data directory), refuses any `rm`.
GUARD = r"""#!/bin/sh
event=$(cat)
printf '%s\n' "$event" >> "$PWD/events.jsonl"
if [ -e "$TOKEN" ]; then echo "sees the token"; else echo "sandboxed"; fi
case "$event" in
  *'"command": "rm '*) echo "no rm in this project" >&2; exit 2 ;;
esac
exit 0
"""


def config(fake: FakeProvider, hooks: str) -> str:
    return (
        fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\ntools = ["shell"]\n'
        + hooks
    )


def hook(event: str, command: list[str], extra: str = "") -> str:
    return f'\n[[hooks]]\nevent = "{event}"\ncommand = {json.dumps(command)}\n{extra}'


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m.get("role") == "tool"]


@pytest.mark.timeout(120)
async def test_hooks_see_every_event_run_sandboxed_and_a_pre_tool_hook_blocks(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake, ""), start=False)
    guard = ["/bin/sh", "-c", f"TOKEN={d.data_dir.token_path} exec /bin/sh ./guard.sh"]
    hooks = (
        hook("prompt_submit", guard)
        + hook("pre_tool", guard, 'matcher = "shell"\n')
        + hook("post_tool", guard, 'matcher = "sh*"\n')
        + hook("turn_end", guard, "sandbox = false\n")
    )
    d.config_path.write_text(config(fake, hooks) + "\n[server]\nport = 0\n")
    d.start()
    (d.workdir / "guard.sh").write_text(GUARD)
    (d.workdir / "keep.txt").write_text("precious")
    fake.enqueue(
        Reply().tool_call("shell", {"command": "echo allowed"}),
        Reply().tool_call("shell", {"command": "rm keep.txt"}),
        Reply().text("done"),
    )
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        notes = await run_turn(client, cid, "tidy up")
        assert notes[-1]["params"]["status"] == "completed"
        allowed, blocked = completed_items(notes, "tool_result")
        assert "allowed" in allowed["output"] and not allowed["isError"]
        # Blocked: it never ran, and the model reads the hook's stderr as the reason.
        assert blocked["isError"] and (d.workdir / "keep.txt").read_text() == "precious"
        assert "no rm in this project" in blocked["output"]
        assert "blocked this call of shell" in blocked["output"]
        assert any("no rm in this project" in m for m in tool_messages(fake.requests[-1].json))

        # Each event reached the hook as JSON on its stdin, in order.
        lines = (d.workdir / "events.jsonl").read_text().splitlines()
        events = [json.loads(line) for line in lines]
        assert [e["event"] for e in events] == [
            "prompt_submit",
            "pre_tool",
            "post_tool",
            "pre_tool",
            "turn_end",
        ]
        assert events[0]["prompt"] == "tidy up" and events[0]["conversationId"] == cid
        assert events[1]["tool"] == "shell" and events[1]["arguments"] == {
            "command": "echo allowed"
        }
        assert "allowed" in events[2]["output"] and events[2]["isError"] is False
        assert events[4]["status"] == "completed"

        # Shown in clients: a notice per run that printed something, the block's reason too;
        # inside the agent's sandbox (the data directory hidden) unless `sandbox = false`.
        shown = [i["text"] for i in completed_items(notes, "notice") if i["kind"] == "hook"]
        assert len(shown) == 5 and all("sandboxed" in text for text in shown[:4])
        assert shown[4].startswith("turn_end hook") and "sees the token" in shown[4]
        assert any("pre_tool hook" in t and "exited with code 2" in t for t in shown)
        assert any("no rm in this project" in t for t in shown)
    finally:
        await client.close()


@pytest.mark.timeout(120)
async def test_a_hanging_pre_tool_hook_is_killed_at_its_timeout_and_blocks_the_call(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    # Far longer than the test may run: only the kill at timeout_s lets the turn end.
    hang = hook("pre_tool", ["/bin/sh", "-c", "sleep 600"], "timeout_s = 1\n")
    d = daemon_factory(config(fake, hang))
    fake.enqueue(Reply().tool_call("shell", {"command": "touch ran.txt"}), Reply().text("ok"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        notes = await run_turn(client, cid, "go")
        assert notes[-1]["params"]["status"] == "completed"
        [result] = completed_items(notes, "tool_result")
        assert result["isError"] and not (d.workdir / "ran.txt").exists()
        assert "did not finish within timeout_s = 1 s" in result["output"]
        [shown] = [i["text"] for i in completed_items(notes, "notice") if i["kind"] == "hook"]
        assert "did not finish within timeout_s = 1 s" in shown
    finally:
        await client.close()
