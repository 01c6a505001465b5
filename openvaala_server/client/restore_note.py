"""What a client tells the user about a file restore's turns that could not be restored
(docs/protocol.md, conversation/rewind `restoreFiles` and conversation/undo: `missingTurnIds`).

The TUI and the editor bridge say the same sentence; the web UI says it in js/history.js."""

from __future__ import annotations

from collections.abc import Mapping


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
