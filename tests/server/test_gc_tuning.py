"""The daemon's garbage-collector schedule (openvaala_server/gc_tuning.py; docs/design.md,
"Performance at scale"): once settled, what start-up created is frozen out of every
collection. The pauses it saves are measured by bench/fanout_load.py."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from openvaala_server import gc_tuning


@pytest.fixture
def restored() -> Iterator[None]:
    yield
    gc.unfreeze()


def test_settle_freezes_what_is_alive(restored: None) -> None:
    alive = [[n] for n in range(1000)]  # containers made before settling
    gc.unfreeze()
    gc_tuning.settle()
    assert gc.get_freeze_count() >= len(alive)
    assert gc.get_objects(generation=2) == []  # a full collection has nothing to walk


def test_the_collector_paused_for_the_start_runs_again_once_settled(restored: None) -> None:
    gc_tuning.pause()
    try:
        assert not gc.isenabled()
        gc_tuning.settle()
        assert gc.isenabled()  # a daemon that runs for days collects its cycles
    finally:
        gc.enable()
