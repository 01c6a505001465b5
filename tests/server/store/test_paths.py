"""The data directory: where it is, and ids that never become paths."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from openvaala_server.domain.ids import new_id
from openvaala_server.store.paths import DataDir, InvalidId


def test_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"OPENVAALA_HOME": "/a", "XDG_DATA_HOME": "/b"}
    assert DataDir.resolve(env).root == Path("/a")
    assert DataDir.resolve({"XDG_DATA_HOME": "/b"}).root == Path("/b/openvaala")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert DataDir.resolve({}).root == tmp_path / ".local/share/openvaala"


def test_ensure_is_private(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "home")
    data.ensure()
    assert stat.S_IMODE(data.root.stat().st_mode) == 0o700
    assert data.conversations_dir.is_dir()
    assert data.lock_path.name == "runtime.lock" and data.token_path.name == "token"
    assert data.metadata_db.name == "metadata.db"


@pytest.mark.parametrize("bad", ["..", "../etc", "A" * 32, "0" * 31, "", "x/" + "0" * 30])
def test_invalid_ids_never_become_paths(tmp_path: Path, bad: str) -> None:
    data = DataDir(tmp_path)
    with pytest.raises(InvalidId):
        data.conversation_dir(bad)
    with pytest.raises(ValueError):
        data.session_file(new_id(), bad)
    cid, sid = new_id(), new_id()
    assert data.session_file(cid, sid) == tmp_path / "conversations" / cid / f"{sid}.jsonl"
