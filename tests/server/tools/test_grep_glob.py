"""grep and glob on a generated tree with .gitignore files, with ripgrep and with the fallback."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.domain.permissions import Confinement
from openvaala_server.tools import search
from openvaala_server.tools.base import ToolContext, ToolResult
from openvaala_server.tools.search import GlobTool, GrepTool, find_ripgrep
from tests.server.tools.sandbox_places import TOKEN, Places

RG = shutil.which("rg")


def _no_ripgrep() -> str | None:
    return None


def _ripgrep() -> str | None:
    return RG


@pytest.fixture(params=["ripgrep", "python"])
def grep(request: pytest.FixtureRequest) -> GrepTool:
    if request.param == "ripgrep":
        if RG is None:
            pytest.skip("ripgrep is not installed")
        return GrepTool(ripgrep=_ripgrep)
    return GrepTool(ripgrep=_no_ripgrep)


def make_tree(root: Path) -> None:
    files = {
        ".gitignore": "build/\n*.log\n!keep.log\n/generated.py\n",
        "src/app.py": "import os\n\n\ndef main():\n    return helper()\n",
        "src/util.py": "def helper():\n    # TODO: Helper docs\n    return 1\n",
        "src/web/.gitignore": "*.min.js\n",
        "src/web/app.js": "function helper() {}\n",
        "src/web/app.min.js": "function helper(){}\n",
        "src/web/app.ts": "const helper = 1;\n",
        "build/out.py": "def helper(): pass\n",
        "debug.log": "helper\n",
        "keep.log": "helper kept\n",
        "generated.py": "helper = None\n",
        "docs/generated.py": "helper = 'docs'\n",
        ".github/ci.yml": "run: helper\n",
        ".git/config": "helper\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "blob.bin").write_bytes(b"helper\0\x01\x02")


async def run(
    tool: Any, cwd: Path, confinement: Confinement | None = None, **arguments: Any
) -> ToolResult:
    ctx = ToolContext(cwd=cwd, emit_output=lambda chunk: None)
    if confinement is not None:
        ctx.confinement = confinement
    result: ToolResult = await tool.run(arguments, ctx)
    return result


async def test_grep_respects_gitignore_at_every_level(grep: GrepTool, tmp_path: Path) -> None:
    make_tree(tmp_path)
    result = await run(grep, tmp_path, pattern="helper")
    assert not result.is_error
    assert result.output.splitlines() == [
        ".github/ci.yml:1:run: helper",
        "docs/generated.py:1:helper = 'docs'",  # "/generated.py" is anchored to the top only
        "keep.log:1:helper kept",  # negated after *.log
        "src/app.py:5:    return helper()",
        "src/util.py:1:def helper():",
        "src/web/app.js:1:function helper() {}",
        "src/web/app.ts:1:const helper = 1;",
    ]


async def test_grep_case_context_and_glob(grep: GrepTool, tmp_path: Path) -> None:
    make_tree(tmp_path)
    result = await run(
        grep, tmp_path, pattern="^def|todo", case_insensitive=True, context=1, glob="src/**/*.py"
    )
    assert result.output.splitlines() == [
        "src/app.py-3-",
        "src/app.py:4:def main():",
        "src/app.py-5-    return helper()",
        "--",
        "src/util.py:1:def helper():",
        "src/util.py:2:    # TODO: Helper docs",
        "src/util.py-3-    return 1",
    ]
    braces = await run(grep, tmp_path, pattern="helper", glob="*.{ts,yml}")
    assert braces.output.splitlines() == [
        ".github/ci.yml:1:run: helper",
        "src/web/app.ts:1:const helper = 1;",
    ]
    sensitive = await run(grep, tmp_path, pattern="todo")
    assert sensitive.output == "No matches for 'todo'."


async def test_grep_in_a_subdirectory_or_file_shows_paths_from_the_working_directory(
    grep: GrepTool, tmp_path: Path
) -> None:
    make_tree(tmp_path)
    (tmp_path / "src/web/trace.log").write_text("helper\n")  # ignored by the top .gitignore
    inside = await run(grep, tmp_path, pattern="helper", path="src/web")
    assert inside.output.splitlines() == [
        "src/web/app.js:1:function helper() {}",
        "src/web/app.ts:1:const helper = 1;",
    ]
    # A file named explicitly is searched even though .gitignore leaves it out.
    one = await run(grep, tmp_path, pattern="helper", path="build/out.py")
    assert one.output == "build/out.py:1:def helper(): pass"
    away = await run(grep, tmp_path / "docs", pattern="helper", path=str(tmp_path / "src/web"))
    assert away.output.splitlines()[0] == f"{tmp_path}/src/web/app.js:1:function helper() {{}}"


async def test_grep_output_is_bounded_with_a_notice(grep: GrepTool, tmp_path: Path) -> None:
    for n in range(30):
        (tmp_path / f"f{n:02}.txt").write_text("match\n" * 10)
    few = await run(grep, tmp_path, pattern="match", max_results=5)
    lines = few.output.splitlines()
    assert len(lines) == 6 and few.truncated
    assert lines[-1].startswith("[… stopped at 5 matching lines; there are more")
    ctx = ToolContext(cwd=tmp_path, emit_output=lambda chunk: None, output_limit=200)
    short = await grep.run({"pattern": "match", "max_results": 300}, ctx)
    assert short.truncated
    assert len(short.output) < 400
    assert "more matching lines not shown" in short.output.splitlines()[-1]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"pattern": "foo("}, "Invalid regular expression 'foo('"),
        ({"pattern": "x", "path": "missing"}, "Path not found: missing"),
        ({"pattern": ""}, "Argument 'pattern' is empty"),
        ({}, "Missing required argument 'pattern'"),
        ({"pattern": "x", "context": 99}, "'context' must be at most 20"),
        ({"pattern": "x", "glob": 3}, "'glob' must be a non-empty string"),
    ],
)
async def test_grep_errors(
    grep: GrepTool, tmp_path: Path, arguments: dict[str, Any], message: str
) -> None:
    result = await run(grep, tmp_path, **arguments)
    assert result.is_error
    assert message in result.output


async def test_grep_never_searches_protected_paths(grep: GrepTool, places: Places) -> None:
    confinement = places.confinement("workspace")
    (places.work / "notes.txt").write_text(f"not the {TOKEN[:5]}\n")
    # The data directory and config are inside the tree searched: they are left out.
    result = await run(grep, places.root, confinement, pattern="token|agents")
    assert result.output == "work/notes.txt:1:not the token"
    assert TOKEN not in result.output
    # A link to the token inside the workspace is not followed either.
    linked = await run(grep, places.work, confinement, pattern="grants")
    assert linked.output == "No matches for 'grants'."
    direct = await run(grep, places.work, confinement, pattern="x", path=str(places.data))
    assert direct.is_error
    assert "keeps private" in direct.output


async def test_grep_refuses_a_fifo_rather_than_block(grep: GrepTool, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    result = await run(grep, tmp_path, pattern="x", path="pipe")
    assert result.is_error
    assert "is a FIFO (named pipe), not a regular file" in result.output


async def test_fallback_names_the_files_too_large_to_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "MAX_FALLBACK_BYTES", 1024 * 1024)
    (tmp_path / "big.txt").write_text("helper\n" * 200_000)
    (tmp_path / "small.txt").write_text("helper\n")
    result = await run(GrepTool(ripgrep=_no_ripgrep), tmp_path, pattern="helper")
    assert result.output.splitlines() == [
        "small.txt:1:helper",
        "[1 files over 1 MiB were not searched (big.txt): without ripgrep, grep reads each "
        "file whole]",
    ]


async def test_the_ripgrep_lookup_decides_which_engine_runs(tmp_path: Path) -> None:
    if RG is None:
        pytest.skip("ripgrep is not installed")
    (tmp_path / "a.py").write_text("def helper():\n")
    # Look-behind is Python's syntax, not ripgrep's: the engine shows through.
    python = await run(GrepTool(ripgrep=_no_ripgrep), tmp_path, pattern="(?<=def )helper")
    assert python.output == "a.py:1:def helper():"
    ripgrep = await run(GrepTool(ripgrep=_ripgrep), tmp_path, pattern="(?<=def )helper")
    assert ripgrep.is_error
    assert "Invalid regular expression" in ripgrep.output


def test_find_ripgrep_looks_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_ripgrep() is None
    fake = tmp_path / "rg"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert find_ripgrep() == str(fake)


# --- glob ---


def _age(root: Path, order: list[str]) -> None:
    """Give the files modification times in `order`, newest first."""
    for age, name in enumerate(order):
        stamp = 1_700_000_000 - age * 60
        os.utime(root / name, (stamp, stamp))


async def test_glob_newest_first_respecting_gitignore(tmp_path: Path) -> None:
    make_tree(tmp_path)
    _age(tmp_path, ["src/util.py", "docs/generated.py", "src/app.py", "build/out.py"])
    result = await run(GlobTool(), tmp_path, pattern="*.py")
    assert result.output.splitlines() == ["src/util.py", "docs/generated.py", "src/app.py"]
    scoped = await run(GlobTool(), tmp_path, pattern="src/**/*.{py,ts}")
    assert set(scoped.output.splitlines()) == {"src/util.py", "src/app.py", "src/web/app.ts"}
    under = await run(GlobTool(), tmp_path, pattern="*.js", path="src")
    assert under.output == "src/web/app.js"


async def test_glob_is_bounded_and_reports_errors(tmp_path: Path, places: Places) -> None:
    for n in range(12):
        (tmp_path / f"f{n:02}.txt").write_text("")
    _age(tmp_path, [f"f{n:02}.txt" for n in range(12)])
    few = await run(GlobTool(), tmp_path, pattern="*.txt", max_results=3)
    assert few.output.splitlines() == [
        "f00.txt",
        "f01.txt",
        "f02.txt",
        "[… 9 more files match; narrow the pattern or path, or raise max_results …]",
    ]
    assert few.truncated
    none = await run(GlobTool(), tmp_path, pattern="*.rs")
    assert none.output == "No files match '*.rs'."
    missing = await run(GlobTool(), tmp_path, pattern="*", path="nowhere")
    assert missing.is_error and "Path not found: nowhere" in missing.output
    confinement = places.confinement("workspace")
    everything = await run(GlobTool(), places.root, confinement, pattern="*")
    assert set(everything.output.splitlines()) == {"outside/file.txt"}
    private = await run(GlobTool(), places.work, confinement, pattern="*", path=str(places.data))
    assert private.is_error and "keeps private" in private.output


def test_access_states_a_read(tmp_path: Path) -> None:
    tools: list[Callable[[], Any]] = [GrepTool, GlobTool]
    for make in tools:
        access = make().access({"pattern": "x", "path": "src"}, tmp_path)
        assert access.writes == ()
        assert "'x' in src" in access.summary
