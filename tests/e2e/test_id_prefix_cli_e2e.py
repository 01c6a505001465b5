"""Every CLI command that takes a conversation id refuses a prefix two ids share, naming both,
and takes a longer one that names one, as `openvaala list` shows them (docs/design.md, "Short
ids")."""

from __future__ import annotations

from typing import Any

from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn
from tests.support.twin_ids import add_twin
from tests.tui.conftest import demo_config


async def test_an_ambiguous_prefix_is_refused_by_every_command_and_a_longer_one_works(
    daemon_factory: Any,
) -> None:
    d: Daemon = daemon_factory(demo_config())
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    await run_turn(client, cid, "hello")
    await client.close()
    twin = add_twin(d, cid)

    # The list tells them apart (git lengthens a shared abbreviation the same way).
    listed = [row.split()[0] for row in d.cli("list").stdout.splitlines()[1:]]
    assert sorted(listed) == sorted([cid[:9], twin[:9]]), listed

    shared = cid[:8]
    for args in (
        ["export", shared, "-o", str(d.workdir / "refused.tar")],
        ["exec", "--resume", shared, "hi"],
        ["move", shared, "--to", "elsewhere"],
    ):
        refused = d.cli(*args, timeout=120)
        said = " ".join(refused.stderr.split())
        assert refused.returncode == 2, (args, refused.stderr)
        assert f"conversation id {shared} is ambiguous" in said, (args, said)
        assert cid[:12] in said and twin[:12] in said, (args, said)  # which ones, told apart

    bundle = d.workdir / "twin.tar"
    exported = d.cli("export", twin[:9], "-o", str(bundle), timeout=120)
    assert exported.returncode == 0, exported.stderr
    assert twin in exported.stdout and bundle.is_file()
    resumed = d.cli("exec", "--resume", cid[:9], "again", timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"--resume {cid}" in resumed.stderr
