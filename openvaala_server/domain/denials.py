"""The results a tool call gets when the user's answer to its approval kept it from running:
denied (`approval/respond` with `deny`, docs/protocol.md "Approvals"), or its turn interrupted
while it waited. Written once here, so a client that shows such a call as declined rather than
failed (Codex's `declined` status, docs/codex.md "Items") tells them apart from a call that ran
and failed, in a live turn and in the saved history alike."""

from __future__ import annotations

from typing import Final

DENIED: Final = "The user denied this call; it did not run."
INTERRUPTED_WAITING: Final = (
    "The turn was interrupted while this call waited for approval; it did not run."
)


def denied_text(message: str | None) -> str:
    """The result of a denied call: `message` is what the user said with the denial."""
    return f"{DENIED} Their message: {message}" if message else DENIED


def declined(output: str, is_error: bool) -> bool:
    """Whether a tool result is one of a call the user's answer kept from running."""
    return is_error and output.startswith((DENIED, INTERRUPTED_WAITING))
