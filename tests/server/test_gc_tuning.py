"""The daemon's garbage-collector schedule (openvaala_server/gc_tuning.py; docs/design.md,
"Performance at scale"): once settled, what start-up created is frozen out of every collection
and young collections are rarer. The pauses it saves are measured by bench/fanout_load.py."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from openvaala_server import gc_tuning


@pytest.fixture
def restored() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_settle_freezes_what_is_alive_and_collects_the_young_less_often(restored: None) -> None:
    alive = [[n] for n in range(1000)]  # containers made before settling
    gc.unfreeze()
    settled_before = gc.get_freeze_count()
    gc_tuning.settle()
    assert gc.get_freeze_count() >= settled_before + len(alive)
    assert gc.get_threshold()[0] == gc_tuning.YOUNG_THRESHOLD
