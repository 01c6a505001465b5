"""read_file, write_file, edit_file and list_dir on a temporary directory."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.tools.base import Tool, ToolContext, ToolResult
from openvaala_server.tools.files import (
    MAX_LIST_ENTRIES,
    EditFileTool,
    ListDirTool,
    ReadFileTool,
    WriteFileTool,
)


def make_ctx(cwd: Path, output_limit: int = 20_000) -> ToolContext:
    return ToolContext(cwd=cwd, emit_output=lambda chunk: None, output_limit=output_limit)


async def call(tool: Tool, cwd: Path, **arguments: Any) -> ToolResult:
    return await tool.run(arguments, make_ctx(cwd))


# --- read_file ---


async def test_read_numbers_lines_like_cat_n(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\r\n\ngamma")
    result = await call(ReadFileTool(), tmp_path, path="a.txt")
    assert not result.is_error
    assert result.output == "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma"


async def test_read_offset_and_limit(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = await call(ReadFileTool(), tmp_path, path="n.txt", offset=4, limit=2)
    assert result.output == (
        "     4\tline 4\n     5\tline 5\n[… lines 6-10 not shown; pass offset=6 to read on …]"
    )
    tail = await call(ReadFileTool(), tmp_path, path="n.txt", offset=9)
    assert tail.output == "     9\tline 9\n    10\tline 10"


async def test_read_absolute_path_and_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"caf\xe9\n")
    result = await call(ReadFileTool(), Path("/"), path=str(path))
    assert result.output == "     1\tcaf\ufffd"


async def test_read_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty").touch()
    result = await call(ReadFileTool(), tmp_path, path="empty")
    assert not result.is_error
    assert "is empty" in result.output


async def test_read_long_file_is_truncated(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 50 + "\n" * 1000)
    result = await ReadFileTool().run({"path": "big.txt"}, make_ctx(tmp_path, output_limit=500))
    assert result.truncated
    assert "characters of output truncated" in result.output


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "missing.txt"}, "File not found"),
        ({"path": "sub"}, "is a directory"),
        ({"path": "blob.bin"}, "binary file"),
        ({"path": "n.txt", "offset": 20}, "offset 20 is past the end"),
        ({}, "Missing required argument 'path'"),
        ({"path": 3}, "'path' must be a string, got integer"),
        ({"path": "n.txt", "offset": "2"}, "'offset' must be an integer, got string"),
        ({"path": "n.txt", "offset": 0}, "'offset' must be at least 1"),
        ({"path": "n.txt", "limit": 1.5}, "'limit' must be an integer, got number"),
    ],
)
async def test_read_errors(tmp_path: Path, arguments: dict[str, Any], message: str) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02")
    (tmp_path / "n.txt").write_text("one\ntwo\n")
    result = await ReadFileTool().run(arguments, make_ctx(tmp_path))
    assert result.is_error
    assert message in result.output


# --- write_file ---


async def test_write_creates_parents_and_reports_bytes(tmp_path: Path) -> None:
    result = await call(WriteFileTool(), tmp_path, path="deep/er/f.txt", content="héllo\n")
    assert not result.is_error
    assert "7 bytes written" in result.output
    assert (tmp_path / "deep/er/f.txt").read_text() == "héllo\n"
    assert os.listdir(tmp_path / "deep/er") == ["f.txt"]  # no temp file left behind


async def test_write_overwrites_keeping_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text("old")
    path.chmod(0o751)
    result = await call(WriteFileTool(), tmp_path, path="run.sh", content="new")
    assert result.output.startswith("Overwrote")
    assert path.read_text() == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751


async def test_write_new_file_gets_umask_mode(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        await call(WriteFileTool(), tmp_path, path="new.txt", content="x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


async def test_write_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "target.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("target.txt")
    await call(WriteFileTool(), tmp_path, path="link.txt", content="new")
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "target.txt").read_text() == "new"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "sub", "content": "x"}, "is a directory"),
        ({"path": "f.txt"}, "Missing required argument 'content'"),
        ({"path": "f.txt", "content": ["x"]}, "'content' must be a string, got array"),
        ({"path": "", "content": "x"}, "'path' is empty"),
        ({"path": "file/below", "content": "x"}, "it exists as a file"),
        ({"path": "file/deeper/below", "content": "x"}, "Not a directory"),
    ],
)
async def test_write_errors(tmp_path: Path, arguments: dict[str, Any], message: str) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "file").write_text("a file, not a directory")
    result = await WriteFileTool().run(arguments, make_ctx(tmp_path))
    assert result.is_error
    assert message in result.output


# --- edit_file ---


async def test_edit_replaces_once(tmp_path: Path) -> None:
    path = tmp_path / "code.py"
    path.write_text("def f():\n    return 1\n")
    result = await call(
        EditFileTool(), tmp_path, path="code.py", old_text="return 1", new_text="return 2"
    )
    assert not result.is_error
    assert result.output.startswith("Replaced 1 occurrence in")
    assert path.read_text() == "def f():\n    return 2\n"


async def test_edit_ambiguous_without_replace_all(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("a = 1\nb = 1\nc = 1\n")
    result = await call(EditFileTool(), tmp_path, path="x.txt", old_text="= 1", new_text="= 2")
    assert result.is_error
    assert "occurs 3 times" in result.output
    assert "replace_all" in result.output
    assert path.read_text() == "a = 1\nb = 1\nc = 1\n"  # untouched


async def test_edit_replace_all(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("a = 1\nb = 1\nc = 1\n")
    result = await call(
        EditFileTool(), tmp_path, path="x.txt", old_text="= 1", new_text="= 2", replace_all=True
    )
    assert result.output.startswith("Replaced 3 occurrences")
    assert path.read_text() == "a = 2\nb = 2\nc = 2\n"


async def test_edit_crlf_file_with_lf_old_text(tmp_path: Path) -> None:
    path = tmp_path / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await call(
        EditFileTool(), tmp_path, path="win.txt", old_text="one\ntwo", new_text="1\n2"
    )
    assert not result.is_error
    assert path.read_bytes() == b"1\r\n2\r\nthree\r\n"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "x.txt", "old_text": "zzz", "new_text": "y"}, "old_text was not found"),
        ({"path": "missing.txt", "old_text": "a", "new_text": "b"}, "File not found"),
        ({"path": "sub", "old_text": "a", "new_text": "b"}, "is a directory"),
        ({"path": "latin1.txt", "old_text": "caf", "new_text": "b"}, "not valid UTF-8"),
        ({"path": "blob.bin", "old_text": "ELF", "new_text": "b"}, "binary file"),
        ({"path": "x.txt", "old_text": "", "new_text": "b"}, "'old_text' is empty"),
        ({"path": "x.txt", "old_text": "a", "new_text": "a"}, "identical"),
        ({"path": "x.txt", "old_text": "a"}, "Missing required argument 'new_text'"),
        (
            {"path": "x.txt", "old_text": "a", "new_text": "b", "replace_all": "yes"},
            "'replace_all' must be a boolean, got string",
        ),
    ],
)
async def test_edit_errors(tmp_path: Path, arguments: dict[str, Any], message: str) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "x.txt").write_text("abc\n")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    (tmp_path / "blob.bin").write_bytes(b"\x7fELF\x00\x01")
    result = await EditFileTool().run(arguments, make_ctx(tmp_path))
    assert result.is_error
    assert message in result.output
    assert (tmp_path / "x.txt").read_text() == "abc\n"


# --- list_dir ---


async def test_list_dir_sorted_with_directories_marked(tmp_path: Path) -> None:
    (tmp_path / "b.txt").touch()
    (tmp_path / "a_dir").mkdir()
    (tmp_path / ".hidden").touch()
    (tmp_path / "c").mkdir()
    result = await call(ListDirTool(), tmp_path)
    assert not result.is_error
    assert result.output == ".hidden\na_dir/\nb.txt\nc/"
    sub = await call(ListDirTool(), tmp_path, path="c")
    assert "is empty" in sub.output


async def test_list_dir_caps_the_count(tmp_path: Path) -> None:
    for n in range(MAX_LIST_ENTRIES + 5):
        (tmp_path / f"f{n:05}").touch()
    result = await call(ListDirTool(), tmp_path)
    lines = result.output.split("\n")
    assert len(lines) == MAX_LIST_ENTRIES + 1
    assert lines[-1] == "[… 5 more entries not shown …]"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "nope"}, "Directory not found"),
        ({"path": "f.txt"}, "is a file, not a directory"),
        ({"path": 1}, "'path' must be a string, got integer"),
    ],
)
async def test_list_dir_errors(tmp_path: Path, arguments: dict[str, Any], message: str) -> None:
    (tmp_path / "f.txt").touch()
    result = await ListDirTool().run(arguments, make_ctx(tmp_path))
    assert result.is_error
    assert message in result.output
