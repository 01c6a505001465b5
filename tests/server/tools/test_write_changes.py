"""A write_file result carries its change with the text it replaced (docs/protocol.md, Item
`changes`), so clients show what was overwritten, not only the new text."""

from __future__ import annotations

from pathlib import Path

from openvaala_server.tools.files import WriteFileTool
from tests.server.tools.test_file_tools import call


async def test_a_write_over_a_file_carries_the_old_text(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    result = await call(WriteFileTool(), tmp_path, path="a.txt", content="new\n")
    [change] = result.changes
    assert (change["kind"], change.get("oldText"), change.get("newText")) == (
        "update",
        "old\n",
        "new\n",
    )
    assert "-old\n+new\n" in change["diff"]


async def test_a_new_file_is_added_and_a_binary_one_named_only(tmp_path: Path) -> None:
    created = await call(WriteFileTool(), tmp_path, path="b.txt", content="hi\n")
    [change] = created.changes
    assert change["kind"] == "add" and "oldText" not in change and change.get("newText") == "hi\n"
    (tmp_path / "c.bin").write_bytes(b"\0\1\2")
    over = await call(WriteFileTool(), tmp_path, path="c.bin", content="text\n")
    [change] = over.changes
    assert change["kind"] == "update" and "Binary files" in change["diff"]
    assert "oldText" not in change and (tmp_path / "c.bin").read_text() == "text\n"
