"""What an import did, as `openvaala import` (here or through `--remote`) and `move` say it."""

from __future__ import annotations

from typing import Any


def report_import(result: dict[str, Any]) -> None:
    """What an import did, as `openvaala import` says it (here or on another machine)."""
    if result["conversationId"]:
        print(f"imported {result['conversationId']} ({len(result['imported'])} conversation(s))")
        print(f"working directory: {result['cwd']}")
    else:
        print("skipped: the conversation already exists here")
    dropped = result.get("grantsDropped", 0)
    if dropped:
        print(
            f"dropped {dropped} 'allow for this conversation' grant(s) the bundle carried: "
            "those calls ask again"
        )
    reset = result.get("agentsReset", 0)
    if reset:
        print(
            f"{reset} agent name(s) the bundle gave would have run with more than the default "
            "agent: those sessions run as the default agent"
        )
