"""A user's $HOME for daemon tests that check nothing is written there: outside the working
directory and outside /tmp (a sandboxed command has a private /tmp, where a missing path would
prove nothing). Use with `pytest.mark.usefixtures` or as an argument after importing it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.tools.sandbox_places import make_places


@pytest.fixture
def fake_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The daemon's $HOME for this test (set before the daemon starts)."""
    places = make_places()
    home = places.root / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    yield home
    shutil.rmtree(places.root, ignore_errors=True)
