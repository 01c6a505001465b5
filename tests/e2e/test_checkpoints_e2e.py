"""Checkpoints through the real daemon: a turn that writes, edits, patches and runs shell in a real
working directory; rewind with `restoreFiles` puts every file back; a later user edit is a
conflict; `conversation/undo` undoes the last turn's files only."""

from __future__ import annotations

import base64
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from openvaala_server.client import RpcError
from openvaala_server.config import ConfigError, parse_config
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.events import completed_items, new_conversation, run_turn

Factory = Callable[..., Daemon]


def config(fake: FakeProvider, extra: str = "") -> str:
    agent = '\n[agents.default]\ndescription = "test"\nmodel = "fake"\napproval = "never"\n'
    return fake.config_toml("fake") + agent + extra


PATCH = (
    "*** Begin Patch\n*** Update File: patched.txt\n@@\n-one\n+ONE\n"
    "*** Add File: added.txt\n+new\n*** End Patch\n"
)


def seed(work: Path) -> dict[str, str]:
    files = {
        "edited.txt": "alpha\nbeta\n",
        "patched.txt": "one\ntwo\n",
        "shell-changed.txt": "before shell\n",
        "shell-deleted.txt": "delete me\n",
        "untouched.txt": "same\n",
        "sub/deep.txt": "deep\n",
    }
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    return files


def snapshot(work: Path) -> dict[str, str]:
    return {
        str(p.relative_to(work)): p.read_text()
        for p in sorted(work.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def changing_turn(fake: FakeProvider) -> None:
    fake.enqueue(
        Reply().tool_call("write_file", {"path": "written.txt", "content": "fresh\n"}),
        Reply().tool_call(
            "edit_file", {"path": "edited.txt", "old_text": "beta", "new_text": "BETA"}
        ),
        Reply().tool_call("apply_patch", {"input": PATCH}),
        Reply().tool_call(
            "shell",
            {
                "command": "echo after shell > shell-changed.txt && rm shell-deleted.txt"
                " && mkdir -p made && echo made > made/by-shell.txt && echo x >> sub/deep.txt"
            },
        ),
        Reply().text("Done."),
    )


async def test_rewind_with_restore_puts_every_file_back_and_reports_conflicts(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake))
    work = d.workdir
    seed(work)
    client = await d.client()
    try:
        cid = await new_conversation(client, str(work))
        fake.enqueue(Reply().text("Hello."))
        await run_turn(client, cid, "first, no tools")
        original = snapshot(work)
        changing_turn(fake)
        notes = await run_turn(client, cid, "change the files")
        assert all(not r["isError"] for r in completed_items(notes, "tool_result")), notes
        changed = snapshot(work)
        assert changed["written.txt"] == "fresh\n" and changed["edited.txt"] == "alpha\nBETA\n"
        assert changed["patched.txt"] == "ONE\ntwo\n" and changed["added.txt"] == "new\n"
        assert changed["shell-changed.txt"] == "after shell\n"
        assert "shell-deleted.txt" not in changed and changed["made/by-shell.txt"] == "made\n"

        report = await client.request("conversation/checkpoints", {"conversationId": cid})
        [turn] = report["turns"]
        kinds = {f["path"]: f["change"] for f in turn["files"]}
        assert kinds == {
            "written.txt": "created",
            "edited.txt": "modified",
            "patched.txt": "modified",
            "added.txt": "created",
            "shell-changed.txt": "modified",
            "shell-deleted.txt": "deleted",
            "made/by-shell.txt": "created",
            "sub/deep.txt": "modified",
        }
        assert 0 < report["bytes"] <= report["limitBytes"]
        # The store is the conversation's own: the working directory got no repository.
        assert not (work / ".git").exists()
        store = d.data_dir.conversation_dir(cid) / "checkpoints"
        assert (store / "objects").is_dir()
        # Snapshots hold the user's file contents: private like the rest of the data directory.
        loose = [
            p
            for p in [store, *store.rglob("*")]
            if not p.is_symlink() and stat.S_IMODE(p.stat().st_mode) & 0o077
        ]
        assert loose == []

        # The user edits one of the agent's files afterwards: a conflict, nothing restored.
        (work / "edited.txt").write_text("my own edit\n")
        items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
        message = [i for i in items if i["type"] == "user_message"][1]
        with pytest.raises(RpcError) as refused:
            await client.request(
                "conversation/rewind",
                {"conversationId": cid, "messageId": message["itemId"], "restoreFiles": True},
            )
        assert refused.value.kind == "files_conflict"
        assert error_data(refused.value)["conflicts"] == [
            {"path": "edited.txt", "reason": "changed_since"}
        ]
        assert snapshot(work)["written.txt"] == "fresh\n"  # nothing was restored
        listed = await client.request("conversation/list", {})
        assert len(listed["conversations"]) == 1  # and no rewind was made

        # Confirmed: everything goes back, the user's edit included, and the rewind is made.
        result = await client.request(
            "conversation/rewind",
            {
                "conversationId": cid,
                "messageId": message["itemId"],
                "restoreFiles": True,
                "force": True,
            },
        )
        assert result["composerText"] == "change the files"
        assert result["files"]["conflicts"] == [{"path": "edited.txt", "reason": "changed_since"}]
        assert set(result["files"]["restored"]) == set(kinds)
        assert snapshot(work) == original
        assert not (work / "made").exists() or not any((work / "made").iterdir())
    finally:
        await client.close()


async def test_undo_restores_the_last_turn_only(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake))
    work = d.workdir
    (work / "a.txt").write_text("a0\n")
    client = await d.client()
    try:
        cid = await new_conversation(client, str(work))
        fake.enqueue(
            Reply().tool_call("edit_file", {"path": "a.txt", "old_text": "a0", "new_text": "a1"}),
            Reply().text("ok"),
        )
        await run_turn(client, cid, "one")
        fake.enqueue(
            Reply().tool_call("shell", {"command": "echo a2 > a.txt && echo b > b.txt"}),
            Reply().text("ok"),
        )
        await run_turn(client, cid, "two")
        assert (work / "a.txt").read_text() == "a2\n" and (work / "b.txt").exists()

        undone = await client.request("conversation/undo", {"conversationId": cid})
        assert undone["restored"] == ["a.txt", "b.txt"] and undone["conflicts"] == []
        assert (work / "a.txt").read_text() == "a1\n" and not (work / "b.txt").exists()
        # Again: the turn before.
        await client.request("conversation/undo", {"conversationId": cid})
        assert (work / "a.txt").read_text() == "a0\n"
        with pytest.raises(RpcError) as nothing:
            await client.request("conversation/undo", {"conversationId": cid})
        assert nothing.value.kind == "not_found"
    finally:
        await client.close()


async def test_checkpoints_can_be_switched_off_and_config_is_strict(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake, "\n[checkpoints]\nenabled = false\n"))
    (d.workdir / "a.txt").write_text("a\n")
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        fake.enqueue(
            Reply().tool_call("write_file", {"path": "a.txt", "content": "b\n"}),
            Reply().text("ok"),
        )
        await run_turn(client, cid, "one")
        report = await client.request("conversation/checkpoints", {"conversationId": cid})
        assert report == {
            "enabled": False,
            "bytes": 0,
            "limitBytes": 512 * 1024 * 1024,
            "skipped": [],
            "turns": [],
        }
    finally:
        await client.close()
    with pytest.raises(ConfigError, match=r"checkpoints\.max_mbs"):
        parse_config({"checkpoints": {"max_mbs": 3}})


async def test_the_store_stays_within_its_bound(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    agent = '\n[agents.default]\ndescription = "test"\nmodel = "fake"\napproval = "never"\n'
    big_window = fake.config_toml("fake", context_window=5_000_000, max_output_tokens=1000)
    d = daemon_factory(big_window + agent + "\n[checkpoints]\nmax_mb = 1\n")
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        for name in ("big1.txt", "big2.txt"):
            content = base64.b64encode(os.urandom(450_000)).decode()  # 600 KB, incompressible
            fake.enqueue(
                Reply().tool_call("write_file", {"path": name, "content": content}),
                Reply().text("ok"),
            )
            notes = await run_turn(client, cid, f"write {name}")
            results = completed_items(notes, "tool_result")
            assert [r["isError"] for r in results] == [False], notes[-1]
        report = await client.request("conversation/checkpoints", {"conversationId": cid})
        # The older turn was dropped to stay under 1 MB; the newer one can still be undone.
        assert report["limitBytes"] == 1024 * 1024 and report["bytes"] <= report["limitBytes"]
        assert [f["path"] for t in report["turns"] for f in t["files"]] == ["big2.txt"]
        undone = await client.request("conversation/undo", {"conversationId": cid})
        assert undone["restored"] == ["big2.txt"] and not (d.workdir / "big2.txt").exists()
        with pytest.raises(RpcError) as gone:
            await client.request("conversation/undo", {"conversationId": cid})
        assert gone.value.kind == "not_found" and (d.workdir / "big1.txt").exists()
    finally:
        await client.close()


async def test_a_directory_too_large_to_snapshot_is_reported(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake, "\n[checkpoints]\nsnapshot_timeout_s = 0\n"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        fake.enqueue(
            Reply().tool_call("shell", {"command": "echo x > by-shell.txt"}),
            Reply().tool_call("write_file", {"path": "by-tool.txt", "content": "y\n"}),
            Reply().text("ok"),
        )
        await run_turn(client, cid, "go")
        assert (d.workdir / "by-shell.txt").exists()
        report = await client.request("conversation/checkpoints", {"conversationId": cid})
        # The shell call ran, uncaptured, and the report says why; the named file was captured.
        assert any("took longer than 0 s" in why for why in report["skipped"])
        assert [f["path"] for t in report["turns"] for f in t["files"]] == ["by-tool.txt"]
    finally:
        await client.close()


async def test_a_directory_with_too_many_files_is_not_copied(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(config(fake, "\n[checkpoints]\nmax_files = 3\n"))
    for i in range(5):
        (d.workdir / f"f{i}.txt").write_text("x\n")
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        fake.enqueue(
            Reply().tool_call("shell", {"command": "echo y > f0.txt"}),
            Reply().text("ok"),
        )
        await run_turn(client, cid, "go")
        report = await client.request("conversation/checkpoints", {"conversationId": cid})
        assert any("more than 3 files" in why for why in report["skipped"]), report
        assert report["turns"] == []
        objects = d.data_dir.conversation_dir(cid) / "checkpoints" / "objects"
        assert not [p for p in objects.rglob("*") if p.is_file()]  # nothing was stored
    finally:
        await client.close()


async def test_later_shell_turns_capture_exactly_what_changed(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    """After the first shell call the daemon asks git only about the paths a file watch saw
    (store/tree_watch.py): new folders, deletions, a moved folder and appends are all captured,
    a user's edit between turns is not the turn's, and undo puts every file back."""
    d = daemon_factory(config(fake))
    work = d.workdir
    for name in ("a.txt", "c.txt", "u.txt", "d/one.txt", "d/two.txt"):
        (work / name).parent.mkdir(exist_ok=True)
        (work / name).write_text(f"{name}\n")
    client = await d.client()

    async def shell(command: str, text: str) -> None:
        fake.enqueue(Reply().tool_call("shell", {"command": command}), Reply().text("ok"))
        await run_turn(client, cid, text)

    async def files_of_last_turn() -> dict[str, str]:
        report = await client.request("conversation/checkpoints", {"conversationId": cid})
        return {f["path"]: f["change"] for f in report["turns"][-1]["files"]}

    try:
        cid = await new_conversation(client, str(work))
        await shell("echo one >> a.txt", "one")
        assert await files_of_last_turn() == {"a.txt": "modified"}
        (work / "u.txt").write_text("the user's edit between turns\n")
        await shell(
            "mkdir -p gen/x && echo g > gen/x/g.txt && rm a.txt && echo c >> c.txt && mv d e",
            "two",
        )
        assert await files_of_last_turn() == {
            "gen/x/g.txt": "created",
            "a.txt": "deleted",
            "c.txt": "modified",
            "d/one.txt": "deleted",
            "d/two.txt": "deleted",
            "e/one.txt": "created",
            "e/two.txt": "created",
        }
        await shell("echo more >> gen/x/g.txt && echo new > e/three.txt", "three")
        assert await files_of_last_turn() == {"gen/x/g.txt": "modified", "e/three.txt": "created"}
        for _ in range(3):
            await client.request("conversation/undo", {"conversationId": cid})
        assert sorted(str(p.relative_to(work)) for p in work.rglob("*") if p.is_file()) == [
            "a.txt",
            "c.txt",
            "d/one.txt",
            "d/two.txt",
            "u.txt",
        ]
        assert (work / "a.txt").read_text() == "a.txt\n" and (
            work / "c.txt"
        ).read_text() == "c.txt\n"
        assert (work / "u.txt").read_text() == "the user's edit between turns\n"
    finally:
        await client.close()
