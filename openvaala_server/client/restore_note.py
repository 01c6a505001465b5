"""What a client tells the user about a file restore: the paths it names, the turns that could
not be restored, and the files the checkpoints could not keep (docs/protocol.md,
conversation/rewind `restoreFiles` and conversation/undo: `missingTurnIds`, `skipped`;
conversation/checkpoints: a turn's `skipped`).

The TUI and the editor bridge say the same sentences; the web UI says them in js/history.js."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

SHOWN = 8  # paths named before "and N more"


def paths_text(paths: list[str]) -> str:
    """`a, b, c` — at most `SHOWN` of them, then how many more."""
    shown = ", ".join(paths[:SHOWN])
    return shown + (f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else "")


def missing_note(result: Mapping[str, object] | None) -> str:
    """Empty when every turn's files were put back; else one sentence naming how many turns were
    not and why that happens, so the user knows those files are left as they are."""
    missing = (result or {}).get("missingTurnIds")
    if not isinstance(missing, list) or not missing:
        return ""
    turns = "1 turn" if len(missing) == 1 else f"{len(missing)} turns"
    return (
        f"The file changes of {turns} could not be restored and were left as they are: their "
        "snapshots are gone (the conversation they came from is not in this data directory, "
        "or they were dropped to stay within [checkpoints] max_mb)."
    )


def skipped_note(paths: list[str]) -> str:
    """Empty without such files; else one sentence naming the files a restore leaves as they are
    because they were too large to keep (`[checkpoints] max_file_mb`)."""
    if not paths:
        return ""
    one = len(paths) == 1
    return (
        f"{paths_text(paths)} {'was' if one else 'were'} too large to keep in a checkpoint "
        f"([checkpoints] max_file_mb): {'it is' if one else 'they are'} left as "
        f"{'it is' if one else 'they are'}."
    )


def result_skipped(result: Mapping[str, object] | None) -> list[str]:
    """The paths a restore's result says it left as they are (`skipped`)."""
    listed = (result or {}).get("skipped")
    entries = listed if isinstance(listed, list) else []
    return [str(e["path"]) for e in entries if isinstance(e, dict) and "path" in e]


@dataclass
class FilesSince:
    """What a rewind to a message would restore (`paths`) and leave as it is (`skipped`)."""

    paths: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def files_since(
    items: Sequence[Mapping[str, object]], message_id: str, report: Mapping[str, object]
) -> FilesSince:
    """The files turns from this message on changed (the root's `items`; the checkpoints
    `report`), not restored yet: the turns of the root before the message are the only ones
    left alone."""
    index = next((i for i, m in enumerate(items) if m.get("itemId") == message_id), len(items))
    message_turn = items[index].get("turnId") if index < len(items) else None
    earlier = {m.get("turnId") for m in items[:index]} - {message_turn}
    turns = report.get("turns")
    picked = [
        t
        for t in (turns if isinstance(turns, list) else [])
        if isinstance(t, dict) and not t.get("restored") and t.get("turnId") not in earlier
    ]
    skipped = sorted(set(_paths(t.get("skipped") for t in picked)))
    paths = sorted(set(_paths(t.get("files") for t in picked)) - set(skipped))
    return FilesSince(paths, skipped)


def _paths(lists: Iterable[object]) -> Iterable[str]:
    for entries in lists:
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict) and "path" in entry:
                yield str(entry["path"])
