"""Edit review through the real daemon: the approval of a write_file, edit_file or apply_patch
call carries what it would change, per file, in `approval/requested` and in a subscribe
snapshot's pending approvals (docs/protocol.md, "Approvals"); a call that would fail proposes
nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from openvaala_server.client import Client
from tests.e2e.test_approvals_e2e import fake_config, requested
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import collect_until, new_conversation, snapshot_of, turn_ended

PATCH = """*** Begin Patch
*** Add File: new.txt
+fresh
*** Delete File: gone.txt
*** Update File: notes.txt
*** Move to: moved.txt
@@
-edited line
+patched line
*** End Patch"""


async def _answer(d: Daemon, client: Client, cid: str, tool: str) -> list[dict[str, Any]]:
    """The diffs of the next approval (a call of `tool`), as asked and in a fresh snapshot; then
    allow it."""
    asked = await requested(client)
    assert asked["tool"] == tool
    other = await d.client("late")
    try:
        [pending] = (await snapshot_of(other, cid))["approvals"]
    finally:
        await other.close()
    assert pending["diffs"] == asked["diffs"]
    await client.respond_approval(cid, asked["approvalId"], "allow")
    return list(asked["diffs"])


async def test_file_changing_approvals_carry_their_diffs(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=fake_config(fake_openai, "always"))
    work = Path(os.path.realpath(d.workdir))  # noqa: ASYNC240 - before the daemon is used
    (work / "notes.txt").write_text("old line\n")
    (work / "gone.txt").write_text("to delete\n")
    fake_openai.enqueue(
        Reply().tool_call("write_file", {"path": "notes.txt", "content": "new line\n"}),
        Reply().tool_call(
            "edit_file", {"path": "notes.txt", "old_text": "new", "new_text": "edited"}
        ),
        Reply().tool_call("apply_patch", {"input": PATCH}),
        Reply().tool_call(
            "edit_file", {"path": "moved.txt", "old_text": "absent", "new_text": "x"}
        ),
        Reply().text("done"),
    )
    client = await d.client()
    try:
        cid = await new_conversation(client, str(work))
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})

        [write] = await _answer(d, client, cid, "write_file")
        assert write["path"] == str(work / "notes.txt") and write["kind"] == "update"
        assert write["oldText"] == "old line\n" and write["newText"] == "new line\n"
        assert "-old line\n+new line\n" in write["unified"] and write["truncated"] is False

        [edit] = await _answer(d, client, cid, "edit_file")
        assert (edit["oldText"], edit["newText"]) == ("new line\n", "edited line\n")
        assert "-new line\n+edited line\n" in edit["unified"]

        patch = {
            Path(diff["path"]).name: diff for diff in await _answer(d, client, cid, "apply_patch")
        }
        assert set(patch) == {"new.txt", "gone.txt", "notes.txt", "moved.txt"}
        assert patch["new.txt"]["kind"] == "add" and patch["new.txt"]["oldText"] is None
        assert patch["new.txt"]["newText"] == "fresh\n"
        # A delete proposes the real text it removes.
        assert patch["gone.txt"]["kind"] == "delete"
        assert (
            patch["gone.txt"]["oldText"] == "to delete\n" and patch["gone.txt"]["newText"] is None
        )
        assert "-to delete" in patch["gone.txt"]["unified"]
        assert patch["notes.txt"]["kind"] == "delete"
        assert (patch["moved.txt"]["kind"], patch["moved.txt"]["newText"]) == (
            "add",
            "patched line\n",
        )

        # An edit that would fail (its old_text is not there) proposes no change.
        assert await _answer(d, client, cid, "edit_file") == []
        await collect_until(client, turn_ended())
        assert (work / "moved.txt").read_text() == "patched line\n"
    finally:
        await client.close()
