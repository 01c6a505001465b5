"""Restoring files in a fork through the real daemon: a rewind to a message the fork copied from
its parent also undoes the parent's turns from that message to the branch point (their snapshots
read from the parent's directory, nothing written there); a change made in the parent after the
fork is a conflict; a fork of a fork reaches back two levels; a parent that is gone is reported;
undo stays within the fork's own turns; an exported and imported copy keeps all of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openvaala_server.client import Client, RpcError
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.events import completed_items, new_conversation, run_turn


def config(fake: FakeProvider) -> str:
    agent = '\n[agents.default]\ndescription = "test"\nmodel = "fake"\napproval = "never"\n'
    return fake.config_toml("fake") + agent


async def tools_turn(
    client: Client, fake: FakeProvider, cid: str, text: str, *calls: tuple[str, dict[str, str]]
) -> None:
    fake.enqueue(*(Reply().tool_call(name, args) for name, args in calls), Reply().text("ok"))
    notes = await run_turn(client, cid, text)
    results = completed_items(notes, "tool_result")
    assert [r["isError"] for r in results] == [False] * len(calls), results


def write(path: str, content: str) -> tuple[str, dict[str, str]]:
    return "write_file", {"path": path, "content": content}


def edit(path: str, old: str, new: str) -> tuple[str, dict[str, str]]:
    return "edit_file", {"path": path, "old_text": old, "new_text": new}


async def fork(client: Client, cid: str) -> str:
    forked = await client.request("conversation/fork", {"conversationId": cid})
    fid: str = forked["conversation"]["conversationId"]
    await client.subscribe(fid)
    return fid


async def message(client: Client, cid: str, text: str) -> Any:
    items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
    return next(i for i in items if i["type"] == "user_message" and i["text"] == text)


async def rewind(client: Client, cid: str, to: dict[str, Any], **extra: Any) -> dict[str, Any]:
    params = {"conversationId": cid, "messageId": to["itemId"], "restoreFiles": True, **extra}
    result: dict[str, Any] = await client.request("conversation/rewind", params)
    return result


async def listed(client: Client, cid: str) -> list[tuple[str, str | None, bool, dict[str, str]]]:
    """conversation/checkpoints' turns: (turn, the ancestor that ran it, restored, files)."""
    report = await client.request("conversation/checkpoints", {"conversationId": cid})
    return [
        (
            t["turnId"],
            t.get("fromConversationId"),
            t["restored"],
            {f["path"]: f["change"] for f in t["files"]},
        )
        for t in report["turns"]
    ]


def files(work: Path) -> dict[str, str]:
    return {str(p.relative_to(work)): p.read_text() for p in sorted(work.rglob("*")) if p.is_file()}


def tree_of(directory: Path) -> dict[str, bytes]:
    found = (p for p in directory.rglob("*") if p.is_file())
    return {str(p.relative_to(directory)): p.read_bytes() for p in found}


async def parent_with_two_turns(client: Client, fake: FakeProvider, work: Path) -> str:
    """A conversation whose first turn writes a.txt and whose second edits it and makes b.txt."""
    cid = await new_conversation(client, str(work))
    await tools_turn(client, fake, cid, "one", write("a.txt", "t1\n"))
    await tools_turn(client, fake, cid, "two", edit("a.txt", "t1", "t2"), write("b.txt", "b2\n"))
    return cid


async def test_a_rewind_in_a_fork_undoes_the_parents_turns_up_to_the_branch_point(
    daemon_factory: Any, fake: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config(fake))
    work = d.workdir
    client = await d.client()
    try:
        a = await parent_with_two_turns(client, fake, work)
        b = await fork(client, a)
        await tools_turn(client, fake, b, "three", edit("b.txt", "b2", "b3"))
        assert files(work) == {"a.txt": "t2\n", "b.txt": "b3\n"}
        parent_dir = d.data_dir.conversation_dir(a)
        parent_before = tree_of(parent_dir)
        one, two, three = [await message(client, b, text) for text in ("one", "two", "three")]
        # The fork's checkpoints list the parent's turns it copied (clients ask about restoring
        # files from this list), marked with the conversation that ran them.
        assert await listed(client, b) == [
            (one["turnId"], a, False, {"a.txt": "created"}),
            (two["turnId"], a, False, {"a.txt": "modified", "b.txt": "created"}),
            (three["turnId"], None, False, {"b.txt": "modified"}),
        ]

        result = await rewind(client, b, two)
        # T2 (the parent's) and T3 (the fork's) are undone: a.txt as T1 left it, b.txt gone.
        assert files(work) == {"a.txt": "t1\n"}
        assert result["files"]["restored"] == ["a.txt", "b.txt"]
        assert result["files"]["conflicts"] == [] and "missingTurnIds" not in result["files"]
        assert result["files"]["turnIds"] == [two["turnId"], three["turnId"]]
        assert [row[2] for row in await listed(client, b)] == [False, True, True]
        assert result["composerText"] == "two"
        # The parent's directory was only read.
        assert tree_of(parent_dir) == parent_before
        # Once restored, the fork's turns and the parent's are not restored again.
        again = await rewind(client, b, two)
        assert again["files"] == {"restored": [], "conflicts": [], "turnIds": []}
    finally:
        await client.close()


async def test_a_change_made_in_the_parent_after_the_fork_is_a_conflict(
    daemon_factory: Any, fake: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config(fake))
    work = d.workdir
    client = await d.client()
    try:
        a = await parent_with_two_turns(client, fake, work)
        b = await fork(client, a)
        await tools_turn(client, fake, a, "four", edit("a.txt", "t2", "t4"))
        # Undo in the fork is about the fork's own turns: it has none, the parent's stay.
        with pytest.raises(RpcError) as nothing:
            await client.request("conversation/undo", {"conversationId": b})
        assert nothing.value.kind == "not_found"
        assert files(work) == {"a.txt": "t4\n", "b.txt": "b2\n"}

        two = await message(client, b, "two")
        with pytest.raises(RpcError) as refused:
            await rewind(client, b, two)
        assert refused.value.kind == "files_conflict"
        assert error_data(refused.value)["conflicts"] == [
            {"path": "a.txt", "reason": "changed_since"}
        ]
        assert files(work) == {"a.txt": "t4\n", "b.txt": "b2\n"}  # nothing written
        listed = await client.request("conversation/list", {})
        assert len(listed["conversations"]) == 2  # and no rewind made

        result = await rewind(client, b, two, force=True)
        assert files(work) == {"a.txt": "t1\n"}
        assert result["files"]["conflicts"] == [{"path": "a.txt", "reason": "changed_since"}]
        assert result["files"]["turnIds"] == [two["turnId"]]
    finally:
        await client.close()


async def test_a_fork_of_a_fork_reaches_back_to_its_grandparent(
    daemon_factory: Any, fake: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config(fake))
    work = d.workdir
    (work / "kept.txt").write_text("kept\n")
    client = await d.client()
    try:
        a = await new_conversation(client, str(work))
        await tools_turn(client, fake, a, "one", write("a.txt", "t1\n"))
        b = await fork(client, a)
        # A shell turn: its snapshot (before) is the whole tree, in the middle fork's store.
        await tools_turn(
            client, fake, b, "two", ("shell", {"command": "echo t2 > a.txt && echo b > b.txt"})
        )
        c = await fork(client, b)
        await tools_turn(client, fake, c, "three", write("c.txt", "c\n"), edit("b.txt", "b", "B"))
        assert files(work) == {
            "a.txt": "t2\n",
            "b.txt": "B\n",
            "c.txt": "c\n",
            "kept.txt": "kept\n",
        }

        two = await message(client, c, "two")
        result = await rewind(client, c, two)
        assert files(work) == {"a.txt": "t1\n", "kept.txt": "kept\n"}
        assert result["files"]["restored"] == ["a.txt", "b.txt", "c.txt"]

        # From the fork of the fork's copy up to the grandparent's first turn.
        one = await message(client, c, "one")
        result = await rewind(client, c, one)
        assert files(work) == {"kept.txt": "kept\n"}
        assert result["files"]["turnIds"] == [one["turnId"]]
    finally:
        await client.close()


async def test_a_parent_that_is_gone_is_reported(daemon_factory: Any, fake: FakeProvider) -> None:
    d: Daemon = daemon_factory(config(fake))
    work = d.workdir
    client = await d.client()
    try:
        a = await parent_with_two_turns(client, fake, work)
        b = await fork(client, a)
        await tools_turn(client, fake, b, "three", write("c.txt", "c\n"))
        two = await message(client, b, "two")
        await client.request("conversation/delete", {"conversationId": a})

        result = await rewind(client, b, two)
        # The fork's own turn is undone; the parent's, whose snapshots went with it, is listed.
        assert files(work) == {"a.txt": "t2\n", "b.txt": "b2\n"}
        assert result["files"]["restored"] == ["c.txt"]
        assert result["files"]["missingTurnIds"] == [two["turnId"]]
    finally:
        await client.close()


async def test_an_imported_copy_restores_from_its_imported_parent(
    daemon_factory: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    d: Daemon = daemon_factory(config(fake))
    work = d.workdir
    client = await d.client()
    try:
        a = await parent_with_two_turns(client, fake, work)
        b = await fork(client, a)
        await tools_turn(client, fake, b, "three", write("c.txt", "c\n"))
        bundle = tmp_path / "fork.tar"
        await client.request("conversation/export", {"conversationId": b, "path": str(bundle)})
        both = await client.request(
            "conversation/import",
            {"path": str(bundle), "cwd": str(work), "onConflict": "keep-both"},
        )
        copy = both["renamed"][b]
        # The originals go: the copy reads its parent's snapshots from the parent's copy.
        await client.request("conversation/delete", {"conversationId": b})
        await client.request("conversation/delete", {"conversationId": a})

        result = await rewind(client, copy, await message(client, copy, "two"))
        assert files(work) == {"a.txt": "t1\n"}
        assert result["files"]["restored"] == ["a.txt", "b.txt", "c.txt"]
        assert "missingTurnIds" not in result["files"]
    finally:
        await client.close()
