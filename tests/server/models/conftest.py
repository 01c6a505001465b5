"""Fixtures for the provider tests: the fake provider servers from `tests.fakes`."""

from __future__ import annotations

import sys
from pathlib import Path

# The repository root must be importable for `tests.fakes` (pyproject's `pythonpath = ["."]` does
# this too; kept so these tests also run from other working directories or configs).
_ROOT = str(Path(__file__).resolve().parents[3])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from tests.fakes.fixtures import (  # noqa: E402
    fake_anthropic,
    fake_openai,
    fake_provider,
    fake_responses,
)

__all__ = ["fake_anthropic", "fake_openai", "fake_provider", "fake_responses"]
