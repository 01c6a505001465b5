"""The browser UI: static ES modules served by the daemon, no build step.

The daemon serves `static_dir()/index.html` at the app's path `/s/<pathKey>/` and this folder at
`static/` under it (docs/security.md). Everything the page runs is in that folder (the app's
modules, its CSS, and the vendored builds), so it works under the daemon's strict
Content-Security-Policy.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["static_dir"]


def static_dir() -> Path:
    """The folder holding index.html, the app's JS modules, its CSS and the vendored libraries."""
    return Path(__file__).resolve().parent / "static"
