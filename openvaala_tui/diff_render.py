"""A tool result's file changes (docs/protocol.md, FileChange) as coloured diff text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text

MAX_LINES = 400  # diff lines drawn per result; the rest is counted


def line_style(line: str) -> str:
    if line.startswith(("+++", "---", "diff --git")):
        return "bold"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    if line.startswith("@@"):
        return "cyan"
    return ""


def changes_text(changes: Sequence[Mapping[str, object]]) -> Text:
    """Each file's diff: added lines green, removed red, hunk headers cyan."""
    text = Text()
    drawn = 0
    hidden = 0
    for change in changes:
        for line in str(change.get("diff") or "").splitlines():
            if drawn >= MAX_LINES:
                hidden += 1
                continue
            if drawn:
                text.append("\n")
            text.append(line, style=line_style(line))
            drawn += 1
    if hidden:
        text.append(f"\n… {hidden} more diff lines", style="dim")
    return text


def changes_title(changes: Sequence[Mapping[str, object]]) -> str:
    """`diff · 3 files · +4 −2`."""
    added = removed = 0
    for change in changes:
        for line in str(change.get("diff") or "").splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
    files = "file" if len(changes) == 1 else "files"
    return f"diff · {len(changes)} {files} · +{added} −{removed}"
