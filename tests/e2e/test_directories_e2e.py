"""`directories/list` through a real daemon: the subdirectories of a directory its user can open,
`~` as that user's home, hidden ones only when asked, files never; bad paths are named errors and
the daemon goes on serving."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.client import RpcError
from openvaala_server.domain.dir_paths import BadPath, expand
from tests.support.errors import error_data


def test_expand_reads_tilde_as_the_home_and_wants_absolute_paths() -> None:
    assert expand("~", "/home/ana") == "/home/ana"
    assert expand("  ~/work/../src/ ", "/home/ana") == "/home/ana/src"
    assert expand("", "/home/ana") == "/home/ana"
    assert expand("/srv//data/", "/home/ana") == "/srv/data"
    for bad in ("work", "~bob/x", "./x", "a\x00b"):
        with pytest.raises(BadPath):
            expand(bad, "/home/ana")


async def test_directories_lists_what_the_user_can_open(
    daemon_factory: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "user-home"
    for name in ("work", "Alpha", ".config", "work/deep"):
        (home / name).mkdir(parents=True)
    (home / "notes.txt").write_text("a file, never listed")
    (home / "gone").symlink_to(home / "missing")  # a dangling link is no directory
    monkeypatch.setenv("HOME", str(home))  # the daemon's user's home
    daemon = daemon_factory()
    client = await daemon.client()
    try:
        listing = await client.request("directories/list", {})
        assert listing["path"] == str(home) and listing["home"] == str(home)
        assert [d["name"] for d in listing["directories"]] == ["Alpha", "work"]
        assert listing["parent"] == str(tmp_path) and listing["truncated"] is False

        work = await client.request("directories/list", {"path": "~/work"})
        assert work["path"] == str(home / "work")
        assert work["directories"] == [{"name": "deep", "path": str(home / "work" / "deep")}]
        hidden = await client.request("directories/list", {"path": str(home), "hidden": True})
        assert [d["name"] for d in hidden["directories"]] == [".config", "Alpha", "work"]
        root = await client.request("directories/list", {"path": "/"})
        assert root["parent"] is None

        for params, kind in (
            ({"path": "work"}, "invalid_params"),
            ({"path": "~other/x"}, "invalid_params"),
            ({"path": str(home / "notes.txt")}, "not_found"),
            ({"path": str(home / "nowhere")}, "not_found"),
            ({"path": 3}, "invalid_params"),
        ):
            with pytest.raises(RpcError) as bad:
                await client.request("directories/list", params)
            assert bad.value.kind == kind, params
            assert error_data(bad.value)["param"] == "path", params
        if os.geteuid() != 0:  # root can open anything
            locked = home / "locked"
            locked.mkdir(mode=0o000)
            with pytest.raises(RpcError) as refused:
                await client.request("directories/list", {"path": str(locked)})
            assert refused.value.kind == "invalid_params"
            again = await client.request("directories/list", {})
            assert "locked" not in [d["name"] for d in again["directories"]]
            locked.chmod(0o700)
        # Each refusal says why: a loop of links, a file, a path through a file.
        (home / "loop").symlink_to(home / "loop")
        for path, kind, why in (
            (home / "loop", "invalid_params", "symbolic links"),
            (home / "notes.txt", "not_found", "is not a directory"),
            (home / "notes.txt" / "x", "not_found", "is not a directory"),
            (home / "nowhere", "not_found", "no directory"),
        ):
            with pytest.raises(RpcError) as said:
                await client.request("directories/list", {"path": str(path)})
            assert said.value.kind == kind and why in said.value.message, (path, said.value)
        # Still serving.
        assert (await client.request("directories/list", {"path": "~"}))["path"] == str(home)
    finally:
        await client.close()
