"""`openvaala setup`'s exit statuses (docs/configuration.md, "Setting up with `openvaala setup`").
Apart from the steps so that the TUI, which words its notice from them, imports nothing else."""

from __future__ import annotations

from typing import Final

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1  # the provider said no or did not answer: nothing was written
EXIT_USAGE: Final = 2  # a bad or missing flag
# config.toml was written and loads, but the test turn failed: the model is configured, and
# the user has something to fix rather than something to redo.
EXIT_TEST_FAILED: Final = 3
