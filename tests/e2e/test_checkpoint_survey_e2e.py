"""The survey before a conversation's first whole-tree snapshot, through the real daemon: it
stops counting at `[checkpoints] max_files` instead of listing the whole tree first, and a
`shell` call waits for it no longer than `survey_wait_s` (docs/design.md, "A survey that stops
at its cap")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from inotify_simple import INotify, flags  # type: ignore[import-untyped]

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn
from tests.support.waits import WAIT_S

Factory = Callable[..., Daemon]
FOLDERS = 40
PER_FOLDER = 50


def config(fake: FakeProvider, checkpoints: str) -> str:
    agent = '\n[agents.default]\ndescription = "test"\nmodel = "fake"\napproval = "never"\n'
    return fake.config_toml("fake") + agent + "\n[checkpoints]\n" + checkpoints


def big_tree(work: Path) -> list[Path]:
    """2,000 files in 40 folders: forty times a cap of 50. Three levels down, below what the
    sandbox looks into for repositories to protect (tools/vcs_dirs.py)."""
    folders = []
    for i in range(FOLDERS):
        folder = work / "src" / "lib" / f"pkg{i:02d}"
        folder.mkdir(parents=True)
        for j in range(PER_FOLDER):
            (folder / f"m{j}.py").write_text(f"x = {j}\n")
        folders.append(folder)
    return folders


async def test_a_tree_over_the_cap_is_not_listed_whole_before_the_first_shell_call(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    # The call waits for the survey as long as a test waits for anything (2 s by default).
    d = daemon_factory(config(fake, f"max_files = 50\nsurvey_wait_s = {WAIT_S}\n"))
    folders = big_tree(d.workdir)
    client = await d.client()
    reads = INotify()
    try:
        cid = await new_conversation(client, str(d.workdir))
        # Which of the folders anything opens from now on: the survey, and nothing else here
        # (the command writes at the top, the sandbox looks two levels down, no snapshot is
        # taken of a tree over the cap).
        watched = {reads.add_watch(str(f), flags.OPEN | flags.ACCESS): f for f in folders}
        fake.enqueue(
            Reply().tool_call("shell", {"command": "echo y > top.txt"}),
            Reply().text("ok"),
        )
        await run_turn(client, cid, "go")
        assert (d.workdir / "top.txt").read_text() == "y\n"  # the call ran
        report = await client.request("conversation/checkpoints", {"conversationId": cid})
        assert any("holds more than 50 files" in why for why in report["skipped"]), report
        assert report["turns"] == []  # not snapshot
        # The survey stopped at the 51st file: a few folders read, not the 40 of a listing.
        read = {watched[event.wd] for event in reads.read(timeout=0)}
        assert len(read) < FOLDERS // 2, sorted(f.name for f in read)
    finally:
        reads.close()
        await client.close()


async def test_a_shell_call_runs_uncaptured_when_the_survey_is_late_and_later_ones_are_captured(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    """`survey_wait_s = 0`: the first call does not wait for the survey; it says so, and the
    survey goes on: the next turn's call is captured, and undone."""
    d = daemon_factory(config(fake, "survey_wait_s = 0\n"))
    (d.workdir / "notes.txt").write_text("first\n")
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        fake.enqueue(
            Reply().tool_call("shell", {"command": "echo second > notes.txt"}),
            Reply().text("ok"),
        )
        await run_turn(client, cid, "go")
        assert (d.workdir / "notes.txt").read_text() == "second\n"
        report = await client.request("conversation/checkpoints", {"conversationId": cid})
        assert any("was not done within 0 s" in why for why in report["skipped"]), report
        assert report["turns"] == []
        fake.enqueue(
            Reply().tool_call("shell", {"command": "echo third > notes.txt"}),
            Reply().text("ok"),
        )
        await run_turn(client, cid, "again")
        report = await client.request("conversation/checkpoints", {"conversationId": cid})
        assert [f["path"] for t in report["turns"] for f in t["files"]] == ["notes.txt"], report
        undone = await client.request("conversation/undo", {"conversationId": cid})
        assert undone["restored"] == ["notes.txt"]
        assert (d.workdir / "notes.txt").read_text() == "second\n"
    finally:
        await client.close()
