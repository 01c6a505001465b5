"""What a conversation changed in its working directory, from its checkpoints (`/diff`).

Pure: from the conversation's turns with file changes (oldest first, those undone left out),
each path's state before the first turn that changed it. Comparing that with the file as it is
now gives the conversation's whole change, whoever wrote the file last (docs/protocol.md,
conversation/diff). A path a turn could not keep (over `max_file_mb`) has no known state before:
it is named, not diffed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from openvaala_server.domain.checkpoints import State, TurnFiles


@dataclass
class Baseline:
    """Each path's state before the conversation first changed it (None: it did not exist)."""

    before: dict[str, State] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # path → why it has no baseline


def baseline(turns: Iterable[TurnFiles]) -> Baseline:
    out = Baseline()
    for turn in turns:
        if turn.restored:
            continue
        for path, reason in turn.skipped.items():
            out.skipped.setdefault(path, reason)
        for path, change in turn.files.items():
            out.before.setdefault(path, change.before)
    for path in out.skipped:
        out.before.pop(path, None)
    return out
