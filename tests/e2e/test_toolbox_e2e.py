"""The search and patch tools through the real daemon: the model's calls reach the tools, their
results reach the model's next request, and `apply_patch` goes through the sandbox and approvals."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import collect_until, completed_items, new_conversation, turn_ended

Factory = Callable[..., Daemon]


def config(fake: FakeProvider, approval: str = "escalate", tools: str = "") -> str:
    agent = f'\n[agents.default]\ndescription = "test"\nmodel = "fake"\napproval = "{approval}"\n'
    return fake.config_toml("fake") + agent + tools


def tool_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m.get("role") == "tool"]


async def test_default_agent_greps_globs_and_patches(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake))
    (d.workdir / "src").mkdir()
    (d.workdir / "src" / "app.py").write_text("def main():\n    return 1\n")
    (d.workdir / ".gitignore").write_text("build/\n")
    (d.workdir / "build").mkdir()
    (d.workdir / "build" / "app.py").write_text("def main(): ignored\n")
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n@@\n def main():\n-    return 1\n"
        "+    return 2\n*** Add File: NOTES.md\n+hello\n*** End Patch\n"
    )
    fake.enqueue(
        Reply().tool_call("grep", {"pattern": "def main"}),
        Reply().tool_call("glob", {"pattern": "**/*.py"}),
        Reply().tool_call("apply_patch", {"input": patch}),
        Reply().text("Done."),
    )
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
        notes = await collect_until(client, turn_ended())
        assert notes[-1]["params"]["status"] == "completed"
        grep, glob, patched = (r["output"] for r in completed_items(notes, "tool_result"))
        assert "src/app.py:1:def main():" in grep and "build/" not in grep  # .gitignore
        assert "src/app.py" in glob and "build/app.py" not in glob
        assert "+    return 2" in patched and "A NOTES.md" in patched
        assert (d.workdir / "src" / "app.py").read_text() == "def main():\n    return 2\n"
        assert (d.workdir / "NOTES.md").read_text() == "hello\n"
        # Each result reached the model's next request.
        last = fake.requests[-1].json
        assert any("src/app.py:1:def main():" in m for m in tool_messages(last))
    finally:
        await client.close()


async def test_a_patch_outside_the_workspace_asks_and_a_denial_changes_nothing(
    daemon_factory: Factory, fake: FakeProvider, tmp_path: Path
) -> None:
    d = daemon_factory(config(fake))
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    inside = d.workdir / "inside.txt"
    patch = (
        f"*** Begin Patch\n*** Add File: {inside}\n+new\n"
        f"*** Update File: {outside}\n@@\n-keep\n+changed\n*** End Patch\n"
    )
    fake.enqueue(Reply().tool_call("apply_patch", {"input": patch}), Reply().text("Stopped."))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
        [asked] = [
            n["params"]
            for n in await collect_until(client, lambda n: n["method"] == "approval/requested")
            if n["method"] == "approval/requested"
        ]
        assert asked["tool"] == "apply_patch" and str(outside) in asked["reason"]
        await client.respond_approval(cid, asked["approvalId"], "deny", "not that file")
        notes = await collect_until(client, turn_ended())
        [result] = completed_items(notes, "tool_result")
        assert result["isError"] and "not that file" in result["output"]
        assert outside.read_text() == "keep\n" and not inside.exists()  # all files or none
    finally:
        await client.close()
