"""How long a test waits for something to happen before it fails.

Every wait returns as soon as its condition holds: this limit only decides when a failing test
gives up. CI runs three workers on two cores beside Chromium, Neovim and daemons (.ci/run), where
waits of 2-10 s ran out on tests that were right; the per-test timeout (60 s, pyproject.toml)
still bounds a test with several waits.
"""

from __future__ import annotations

WAIT_S = 30.0
