"""A hostile bundle through the real daemon: git settings planted in an exported conversation's
snapshot store (an fsmonitor command, a clean filter) are imported over the protocol, and the
next `shell` turn, whose checkpoint runs git on that store, runs none of them (docs/security.md,
"Bundles")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openvaala_server.store.checkpoints import GIT_DIR_NAME
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.store.test_bundle_hostile import _hostile_config, _repack
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn


def _config(fake: FakeProvider) -> str:
    agent = '\n[agents.default]\ndescription = "test"\nmodel = "fake"\napproval = "never"\n'
    return fake.config_toml("fake") + agent


async def test_an_imported_bundle_cannot_make_the_next_shell_turn_run_commands(
    daemon_factory: Any, fake_openai: FakeProvider, tmp_path: Path
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        fake_openai.enqueue(Reply().text("hello"))
        await run_turn(client, cid, "hi")
        exported = tmp_path / "real.tar"
        await client.request("conversation/export", {"conversationId": cid, "path": str(exported)})
        marker = tmp_path / "ran"
        hostile = tmp_path / "hostile.tar"
        hostile.write_bytes(
            _repack(
                exported.read_bytes(),
                {
                    f"{GIT_DIR_NAME}/HEAD": b"ref: refs/heads/main\n",
                    f"{GIT_DIR_NAME}/objects/00/0": b"",
                    f"{GIT_DIR_NAME}/refs/.keep": b"",
                    f"{GIT_DIR_NAME}/config": _hostile_config(marker),
                    f"{GIT_DIR_NAME}/info/attributes": b"* filter=x\n",
                },
            )
        )
        imported = await client.request(
            "conversation/import",
            {"path": str(hostile), "cwd": str(d.workdir), "onConflict": "keep-both"},
        )
        new = imported["conversationId"]
        assert new and new != cid
        await client.subscribe(new)
        (d.workdir / "kept.txt").write_text("before\n")
        fake_openai.enqueue(
            Reply().tool_call("shell", {"command": "echo after > kept.txt && echo new > made.txt"}),
            Reply().text("done"),
        )
        notes = await run_turn(client, new, "change the files")
        assert notes[-1]["params"]["status"] == "completed"
        assert (d.workdir / "made.txt").read_text() == "new\n"
        # git ran on the imported store (the turn was captured) and ran nothing it planted.
        report = await client.request("conversation/checkpoints", {"conversationId": new})
        assert report["skipped"] == []
        changed = {f["path"]: f["change"] for t in report["turns"] for f in t["files"]}
        assert changed == {"kept.txt": "modified", "made.txt": "created"}
        planted = [Path(f"{marker}{end}") for end in ("", ".fsmonitor")]
        assert [p.name for p in planted if p.exists()] == []
        # And the capture is good: undo puts the files back.
        undone = await client.request("conversation/undo", {"conversationId": new})
        assert sorted(undone["restored"]) == ["kept.txt", "made.txt"]
        assert (d.workdir / "kept.txt").read_text() == "before\n"
        assert not (d.workdir / "made.txt").exists()
    finally:
        await client.close()
