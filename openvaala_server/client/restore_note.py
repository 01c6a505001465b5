"""What a client tells the user about a file restore: the paths it names, and the turns that could
not be restored (docs/protocol.md, conversation/rewind `restoreFiles` and conversation/undo:
`missingTurnIds`).

The TUI and the editor bridge say the same sentences; the web UI says them in js/history.js."""

from __future__ import annotations

from collections.abc import Mapping

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
