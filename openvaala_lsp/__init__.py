"""The OpenVaala editor bridge: `openvaala lsp`, a language server over stdio that connects any LSP
editor to the local OpenVaala daemon.

It holds no conversation state of its own: every action is a daemon request, every event is the
daemon's notification forwarded unchanged, and the only thing it folds is what drawing the
read-only transcript document needs (see `view.py`).
"""

from openvaala_lsp.version import __version__

__all__ = ["__version__"]
