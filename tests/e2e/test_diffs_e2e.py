"""The `changes` of a file-changing tool result, through the real daemon: one entry per file with
its kind, its diff and (small files) the text before and after, which clients render."""

from __future__ import annotations

from collections.abc import Callable

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import completed_items, new_conversation, run_turn

Factory = Callable[..., Daemon]


async def test_patch_and_edit_results_carry_per_file_changes(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    config = fake.config_toml("fake") + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\n'
    d = daemon_factory(config)
    (d.workdir / "keep.py").write_text("a = 1\nb = 2\n")
    (d.workdir / "old.txt").write_text("bye\n")
    (d.workdir / "move_me.txt").write_text("x\n")
    patch = (
        "*** Begin Patch\n"
        "*** Add File: new.txt\n+hello\n"
        "*** Update File: keep.py\n@@\n a = 1\n-b = 2\n+b = 3\n"
        "*** Delete File: old.txt\n"
        "*** Update File: move_me.txt\n*** Move to: moved.txt\n@@\n-x\n+y\n"
        "*** End Patch\n"
    )
    fake.enqueue(
        Reply().tool_call("apply_patch", {"input": patch}),
        Reply().tool_call("edit_file", {"path": "keep.py", "old_text": "a = 1", "new_text": "a=0"}),
        Reply().text("done"),
    )
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        notes = await run_turn(client, cid, "change files")
        patched, edited = completed_items(notes, "tool_result")
        add, update, delete, move = patched["changes"]
        assert add == {
            "path": "new.txt",
            "kind": "add",
            "diff": add["diff"],
            "newText": "hello\n",
        }
        assert "+hello" in add["diff"]
        assert update["kind"] == "update" and update["path"] == "keep.py"
        assert update["oldText"] == "a = 1\nb = 2\n" and update["newText"] == "a = 1\nb = 3\n"
        assert "-b = 2\n+b = 3\n" in update["diff"]
        assert delete["kind"] == "delete" and delete["oldText"] == "bye\n"
        assert "newText" not in delete and "-bye" in delete["diff"]
        assert move["kind"] == "move" and move["movePath"] == "moved.txt"
        assert move["oldText"] == "x\n" and move["newText"] == "y\n"
        [change] = edited["changes"]
        assert change["kind"] == "update" and change["path"] == "keep.py"
        assert change["oldText"] == "a = 1\nb = 3\n" and change["newText"] == "a=0\nb = 3\n"
        assert "-a = 1\n+a=0\n" in change["diff"]
        # The saved history has them too (a client that opens the conversation later).
        read = await client.request("conversation/read", {"conversationId": cid})
        saved = [i for i in read["items"] if i["type"] == "tool_result"]
        assert saved[0]["changes"] == patched["changes"]
    finally:
        await client.close()
