"""apply_patch on real files: several files at once, all or nothing, inside the sandbox."""

from __future__ import annotations

from pathlib import Path

from openvaala_server.domain.permissions import Confinement
from openvaala_server.tools.base import ToolContext, ToolResult
from openvaala_server.tools.patch import ApplyPatchTool
from tests.server.tools.sandbox_places import Places


async def apply(cwd: Path, patch: str, confinement: Confinement | None = None) -> ToolResult:
    ctx = ToolContext(cwd=cwd, emit_output=lambda chunk: None)
    if confinement is not None:
        ctx.confinement = confinement
    return await ApplyPatchTool().run({"input": patch}, ctx)


def snapshot(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): path.read_text()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def make_tree(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("import os\n\n\ndef main():\n    print('hi')\n")
    (root / "src" / "util.py").write_text("def helper():\n    return 1\n")
    (root / "old.txt").write_text("obsolete\n")


MULTI = """*** Begin Patch
*** Add File: docs/notes.md
+# Notes
+first
*** Update File: src/app.py
@@ def main():
-    print('hi')
+    print('hello')
+    return 0
*** Update File: src/util.py
*** Move to: lib/util.py
@@
 def helper():
-    return 1
+    return 2
*** Delete File: old.txt
*** End Patch
"""


async def test_adds_updates_moves_and_deletes_in_one_call(tmp_path: Path) -> None:
    make_tree(tmp_path)
    result = await apply(tmp_path, MULTI)
    assert not result.is_error, result.output
    assert snapshot(tmp_path) == {
        "docs/notes.md": "# Notes\nfirst\n",
        "lib/util.py": "def helper():\n    return 2\n",
        "src/app.py": "import os\n\n\ndef main():\n    print('hello')\n    return 0\n",
    }
    lines = result.output.splitlines()
    assert lines[:5] == [
        "Applied the patch: 4 file changes.",
        "A docs/notes.md",
        "M src/app.py",
        "R src/util.py -> lib/util.py",
        "D old.txt",
    ]
    # The diff of each file follows, git-style, for the model and for clients to render.
    assert "diff --git a/src/app.py b/src/app.py\n--- a/src/app.py\n+++ b/src/app.py\n" in (
        result.output
    )
    assert "-    print('hi')\n+    print('hello')\n+    return 0" in result.output
    assert "diff --git a/src/util.py b/lib/util.py\nrename from src/util.py" in result.output
    assert "diff --git a/old.txt b/old.txt\ndeleted file\n" in result.output


async def test_a_chunk_that_does_not_apply_changes_nothing(tmp_path: Path) -> None:
    make_tree(tmp_path)
    before = snapshot(tmp_path)
    patch = MULTI.replace("-    return 1", "-    return 42")
    result = await apply(tmp_path, patch)
    assert result.is_error
    assert snapshot(tmp_path) == before  # not even the added file or the first update
    assert "Chunk 1 (@@, patch line 12) of src/util.py does not apply" in result.output
    assert "  def helper():\n      return 42" in result.output
    assert result.output.endswith("Nothing was changed.")


async def test_a_failed_write_puts_back_what_was_written(tmp_path: Path) -> None:
    make_tree(tmp_path)
    before = snapshot(tmp_path)
    # The second file's directory cannot be made (a file has that name): the first is undone.
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n@@\n-import os\n+import sys\n"
        "*** Add File: old.txt/inner.txt\n+x\n*** End Patch"
    )
    result = await apply(tmp_path, patch)
    assert result.is_error
    assert "old.txt" in result.output
    assert snapshot(tmp_path) == before


async def test_missing_files_and_bad_input_are_clear_errors(tmp_path: Path) -> None:
    make_tree(tmp_path)
    missing = await apply(
        tmp_path, "*** Begin Patch\n*** Update File: nope.py\n@@\n-x\n+y\n*** End Patch"
    )
    assert missing.is_error
    assert "Update File: nope.py does not exist" in missing.output
    garbage = await apply(tmp_path, "please change app.py")
    assert garbage.is_error
    assert "The first line of the patch must be '*** Begin Patch'" in garbage.output
    no_input = await ApplyPatchTool().run({}, ToolContext(cwd=tmp_path, emit_output=print))
    assert "Missing required argument 'input'" in no_input.output


async def test_workspace_sandbox_refuses_paths_outside_and_changes_nothing(
    places: Places,
) -> None:
    (places.work / "inside.txt").write_text("a\n")
    outside_before = snapshot(places.outside)
    for target in (
        f"*** Add File: {places.outside / 'new.txt'}\n+x",
        "*** Update File: link.txt\n@@\n-original\n+changed",  # a link leading out
        "*** Update File: inside.txt\n*** Move to: ../outside/moved.txt\n@@\n-a\n+b",
    ):
        patch = (
            "*** Begin Patch\n*** Add File: fine.txt\n+ok\n"
            f"{target}\n*** Update File: inside.txt\n@@\n-a\n+c\n*** End Patch"
        )
        result = await apply(places.work, patch, places.confinement("workspace"))
        assert result.is_error
        assert "blocked by the sandbox: workspace" in result.output
        assert not (places.work / "fine.txt").exists()
        assert (places.work / "inside.txt").read_text() == "a\n"
        assert snapshot(places.outside) == outside_before


async def test_read_only_and_protected_paths_are_refused(places: Places) -> None:
    (places.work / "inside.txt").write_text("a\n")
    patch = "*** Begin Patch\n*** Update File: inside.txt\n@@\n-a\n+b\n*** End Patch"
    read_only = await apply(places.work, patch, places.confinement("read-only"))
    assert "blocked by the sandbox: read-only" in read_only.output
    token = f"*** Begin Patch\n*** Delete File: {places.token}\n*** End Patch"
    protected = await apply(places.work, token, places.confinement("off"))
    assert "keeps private" in protected.output
    assert places.token.exists()
    assert (places.work / "inside.txt").read_text() == "a\n"


def test_access_names_every_written_path(tmp_path: Path) -> None:
    make_tree(tmp_path)
    access = ApplyPatchTool().access({"input": MULTI}, tmp_path)
    real = tmp_path.resolve()
    assert access.writes == (
        real / "docs/notes.md",
        real / "src/app.py",
        real / "src/util.py",
        real / "lib/util.py",
        real / "old.txt",
    )
    assert access.summary == (
        "apply_patch: add docs/notes.md, update src/app.py, move src/util.py to lib/util.py, "
        "delete old.txt"
    )


async def test_binary_files_can_be_deleted_and_are_put_back_byte_for_byte(tmp_path: Path) -> None:
    make_tree(tmp_path)
    blob = bytes(range(256)) * 4
    (tmp_path / "blob.bin").write_bytes(blob)
    failing = (
        "*** Begin Patch\n*** Delete File: blob.bin\n*** Add File: old.txt/inner.txt\n+x\n"
        "*** End Patch"
    )
    result = await apply(tmp_path, failing)
    assert result.is_error
    assert (tmp_path / "blob.bin").read_bytes() == blob
    deleted = await apply(tmp_path, "*** Begin Patch\n*** Delete File: blob.bin\n*** End Patch")
    assert not deleted.is_error, deleted.output
    assert "Binary files a/blob.bin and /dev/null differ" in deleted.output
    assert not (tmp_path / "blob.bin").exists()
    update = await apply(
        tmp_path,
        "*** Begin Patch\n*** Update File: src/app.py\n@@\n-import os\n+import re\n"
        "*** Update File: latin1.txt\n@@\n-x\n+y\n*** End Patch",
    )
    assert (
        "latin1.txt" in update.output and "Update File: latin1.txt does not exist" in update.output
    )
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    latin = await apply(
        tmp_path, "*** Begin Patch\n*** Update File: latin1.txt\n@@\n-x\n+y\n*** End Patch"
    )
    assert "latin1.txt is not valid UTF-8" in latin.output
