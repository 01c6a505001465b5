"""`conversation/diff` through the real daemon: a file the conversation changed that has grown
past the checkpoint limit since, or whose folder became a link out of the working directory, is
named in `skipped`, never read into the answer (docs/protocol.md, conversation/diff)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn
from tests.support.running import running_daemon

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"

[checkpoints]
max_file_mb = 1
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("diff"), CONFIG) as d:
        yield d


async def test_a_grown_file_and_a_link_out_are_named_not_read(home: Daemon, tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text("not the conversation's\n")
    client = await home.client()
    try:
        cid = await new_conversation(client, str(work))
        for name in ("log.txt", "sub/secret.txt", "small.txt"):
            write = json.dumps({"path": str(work / name), "content": "one\n"})
            await run_turn(client, cid, f"call: write_file {write}")
        (work / "log.txt").write_text("line\n" * 400_000)  # 2 MB, past max_file_mb
        (work / "sub" / "secret.txt").unlink()
        (work / "sub").rmdir()
        (work / "sub").symlink_to(elsewhere)
        result = await client.request("conversation/diff", {"conversationId": cid})
        assert [f["path"] for f in result["files"]] == ["small.txt"]
        skipped = {s["path"]: s["reason"] for s in result.get("skipped", [])}
        assert "larger than the checkpoint limit" in skipped["log.txt"]
        assert "outside the working directory" in skipped["sub/secret.txt"]
        assert "not the conversation's" not in json.dumps(result)
    finally:
        await client.close()
