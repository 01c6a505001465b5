"""What a person reads for a `notice` item (docs/protocol.md, "Items").

Some notices are written for the model, which reads them in its next request: `interrupted` ("The
user interrupted the previous turn…") and `resumed` (instructions to carry on). Shown as they are,
they read like a message to someone else, and after an interrupt the terminal UI showed one beside
its own. A client shows these words instead; the other kinds (a failure, a server stop, a hook's
output) are already written for the user and are shown as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

# By the notice's `kind`; `recovery.RESUMED` and `turn_end.interrupt_notice` write them.
FOR_PEOPLE: Final = {
    "interrupted": "Interrupted: anything marked interrupted above was cut short.",
    "resumed": "Continuing the turn the daemon's stop cut, from what was saved "
    "(calls marked interrupted above are not run again).",
}


def notice_text(item: Mapping[str, object]) -> str:
    """The line a client shows for the notice `item`."""
    kind = item.get("kind")
    words = FOR_PEOPLE.get(kind) if isinstance(kind, str) else None
    return words or str(item.get("text") or "")
