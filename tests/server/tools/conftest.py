"""Fixtures of the tool tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.server.tools.sandbox_places import Places, make_places


@pytest.fixture
def places() -> Iterator[Places]:
    """A workspace, a directory outside it and the daemon's private paths, removed afterwards."""
    made = make_places()
    try:
        yield made
    finally:
        shutil.rmtree(made.root, ignore_errors=True)
