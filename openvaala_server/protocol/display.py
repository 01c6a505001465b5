"""Short texts every client shows for wire values (the TUI, the editor bridge)."""

from __future__ import annotations


def format_tokens(n: int) -> str:
    """A token count as people read it in a status line: 950, 1.2k, 12k, 1.3M."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n // 1000}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)
