"""Where the test tree is, for a test that names a helper file beside another test folder's
modules (the MCP test server, say): a module that moves (tests/README.md) keeps finding it."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
