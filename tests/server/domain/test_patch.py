"""The apply_patch grammar and matching, without any file system."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openvaala_server.domain.patch import (
    AddFile,
    Chunk,
    DeleteFile,
    HunkMismatch,
    PatchSyntaxError,
    UpdateFile,
    apply_chunks,
    parse_patch,
    unified_diff,
)


def test_parses_every_kind_of_file_change() -> None:
    patch = (
        "*** Begin Patch\n"
        "*** Add File: src/new.py\n"
        "+print('hi')\n"
        "+\n"
        "*** Delete File: old.txt\n"
        "*** Update File: src/app.py\n"
        "*** Move to: src/main.py\n"
        "@@ def main():\n"
        "-    pass\n"
        "+    return 1\n"
        " \n"
        "@@\n"
        "+tail\n"
        "*** End of File\n"
        "*** End Patch\n"
    )
    assert parse_patch(patch) == (
        AddFile("src/new.py", "print('hi')\n\n"),
        DeleteFile("old.txt"),
        UpdateFile(
            "src/app.py",
            "src/main.py",
            (
                Chunk("def main():", ("    pass", ""), ("    return 1", ""), False, 8, "-+ "),
                Chunk(None, (), ("tail",), True, 12, "+"),
            ),
        ),
    )


def test_first_chunk_may_omit_its_header_and_heredoc_is_stripped() -> None:
    patch = (
        "<<'EOF'\n*** Begin Patch\n*** Update File: a.py\n import os\n+import re\n"
        "*** End Patch\nEOF\n"
    )
    (change,) = parse_patch(patch)
    assert change == UpdateFile(
        "a.py", None, (Chunk(None, ("import os",), ("import os", "import re"), False, 3, " +"),)
    )


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ("", "first line of the patch must be '*** Begin Patch'"),
        ("*** Update File: a\n@@\n-x\n*** End Patch", "first line of the patch must be"),
        (
            "*** Begin Patch\n*** Add File: a\n+x\n",
            "last line of the patch must be '*** End Patch'",
        ),
        ("*** Begin Patch\n*** End Patch", "changes no file"),
        (
            "*** Begin Patch\n*** Frobnicate: a\n*** End Patch",
            "Line 2: '*** Frobnicate: a' is not a file header",
        ),
        (
            "*** Begin Patch\n*** Update File: a.py\n*** End Patch",
            "Line 2: '*** Update File: a.py' has no changes",
        ),
        ("*** Begin Patch\n*** Add File: \n*** End Patch", "Line 2: '*** Add File:' has no path"),
        (
            "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-x\nbogus\n*** End Patch",
            "Line 5: 'bogus' in the chunk of '@@ def f():' must start with ' ' (context), '-'",
        ),
        (
            "*** Begin Patch\n*** Update File: a.py\n@@\n*** End Patch",
            "Line 3: the chunk has no lines",
        ),
    ],
)
def test_malformed_patches_get_clear_errors(patch: str, message: str) -> None:
    with pytest.raises(PatchSyntaxError) as caught:
        parse_patch(patch)
    assert message in str(caught.value)


def _update(patch_body: str) -> tuple[Chunk, ...]:
    (change,) = parse_patch(f"*** Begin Patch\n*** Update File: f\n{patch_body}*** End Patch")
    assert isinstance(change, UpdateFile)
    return change.chunks


def test_chunks_apply_after_their_context_line() -> None:
    original = "def a():\n    x = 1\n\ndef b():\n    x = 1\n"
    chunks = _update("@@ def b():\n-    x = 1\n+    x = 2\n")
    assert apply_chunks(original, chunks, "f") == "def a():\n    x = 1\n\ndef b():\n    x = 2\n"


def test_matching_tolerates_trailing_then_surrounding_whitespace() -> None:
    original = "a = 1   \n    b = 2\nc = 3\n"
    chunks = _update("@@\n a = 1\n-b = 2\n+b = 20\n")
    assert apply_chunks(original, chunks, "f") == "a = 1   \nb = 20\nc = 3\n"


def test_end_of_file_chunk_matches_the_last_lines_and_crlf_is_kept() -> None:
    original = "x\r\ny\r\nx\r\n"
    chunks = _update("@@\n-x\n+z\n*** End of File\n")
    assert apply_chunks(original, chunks, "f") == "x\r\ny\r\nz\r\n"


def test_a_chunk_that_does_not_apply_names_file_chunk_and_expected_lines() -> None:
    chunks = _update("@@\n-one\n+uno\n@@ def g():\n-    missing()\n+    found()\n")
    with pytest.raises(HunkMismatch) as caught:
        apply_chunks("one\ndef f():\n    pass\n", chunks, "src/m.py")
    message = str(caught.value)
    assert "Chunk 2 (@@ def g():, patch line 6) of src/m.py does not apply" in message
    assert "  def g():" in message
    chunks = _update("@@\n-one\n+uno\n@@\n-    missing()\n+    found()\n")
    with pytest.raises(
        HunkMismatch, match=r"Chunk 2 \(@@, patch line 6\)[^\n]*\n      missing\(\)"
    ):
        apply_chunks("one\ndef f():\n    pass\n", chunks, "src/m.py")


def test_unified_diff_of_add_update_delete_and_rename() -> None:
    assert unified_diff(None, "a\n", "n.txt", "n.txt") == (
        "diff --git a/n.txt b/n.txt\nnew file\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+a\n"
    )
    renamed = unified_diff("a\nb\n", "a\nc", "x", "y")
    assert renamed.startswith("diff --git a/x b/y\nrename from x\nrename to y\n--- a/x\n+++ b/y\n")
    assert renamed.endswith("-b\n+c\n\\ No newline at end of file\n")
    assert "deleted file\n--- a/g\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n" in unified_diff(
        "z\n", None, "g", "g"
    )


def _patch_between(old: list[str], new: list[str]) -> str:
    """An Update File patch the way a model writes one: chunks with 3 lines of context."""
    out = ["*** Begin Patch", "*** Update File: f"]
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for group in matcher.get_grouped_opcodes(3):
        out.append("@@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in old[i1:i2]]
                continue
            out += ["-" + line for line in old[i1:i2]]
            out += ["+" + line for line in new[j1:j2]]
    return "\n".join([*out, "*** End Patch"])


_WORDS = st.lists(
    st.text(alphabet="abcdef ", min_size=1, max_size=6).map(str.strip).filter(bool),
    unique=True,
    min_size=1,
    max_size=30,
)


@given(_WORDS, st.data())
def test_a_patch_made_from_a_diff_turns_the_old_file_into_the_new(
    words: list[str], data: st.DataObject
) -> None:
    old = words[: len(words) // 2 + 1]
    # The new file: some old lines kept, others dropped, moved or new, in any order.
    shuffled = data.draw(st.permutations(words))
    new = shuffled[: data.draw(st.integers(min_value=1, max_value=len(words)))]
    if old == new:
        return
    (change,) = parse_patch(_patch_between(old, new))
    assert isinstance(change, UpdateFile)
    assert apply_chunks("\n".join(old) + "\n", change.chunks, "f") == "\n".join(new) + "\n"
