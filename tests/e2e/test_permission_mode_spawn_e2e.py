"""Plan mode and subagents, through the real daemon: a conversation in plan mode can still start
an agent configured like its own (the mode narrows the child as it narrows the parent), and the
child's writes are refused as plan mode says (docs/security.md, "Permission modes")."""

from __future__ import annotations

from typing import Any

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import collect_until, completed_items, method_is, turn_ended
from tests.support.roles import role


def _config(fake: FakeProvider) -> str:
    return (
        fake.config_toml("main")
        + '\n[agents.default]\ndescription = "root"\nmodel = "main"\ninstructions = "ROLE: root"\n'
        + '\n[agents.helper]\ndescription = "Helps"\nmodel = "main"\n'
        + 'instructions = "ROLE: helper"\n'
        + "\n[retry]\nbase_delay_s = 0.01\nmax_delay_s = 0.05\n"
    )


async def test_plan_mode_starts_a_like_configured_helper_that_cannot_write(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))
    client = await d.client()
    created = await client.request("conversation/create", {"cwd": str(d.workdir)})
    cid = created["conversation"]["conversationId"]
    await client.subscribe(cid)
    await client.request("conversation/setPermissionMode", {"conversationId": cid, "mode": "plan"})
    target = d.workdir / "notes.txt"
    fake_openai.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "helper", "task": "write notes"}),
        Reply().text("started"),
        when=lambda q: role(q) == "root",
    )
    fake_openai.enqueue(
        Reply().tool_call("write_file", {"path": str(target), "content": "x"}),
        Reply().text("done"),
        when=lambda q: role(q) == "helper",
    )
    await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
    notes = await collect_until(client, method_is("session/started"))
    [child] = [n["params"]["session"] for n in notes if n["method"] == "session/started"]
    assert child["agent"] == "helper"
    assert not [n for n in notes if n["method"] == "approval/requested"]
    notes = await collect_until(client, turn_ended(child["sessionId"]))
    [write] = [
        i for i in completed_items(notes, "tool_result") if i["sessionId"] == child["sessionId"]
    ]
    assert write["isError"] and "plan mode" in write["output"]
    assert not target.exists()
    await client.close()
