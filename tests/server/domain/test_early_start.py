"""Where early compaction starts (domain/usage.early_start): at `early_compaction` before the first
compaction, then the same share of the way to the threshold from what the latest one left."""

from __future__ import annotations

from openvaala_server.domain.usage import early_start


def test_before_any_compaction_it_is_the_configured_start() -> None:
    assert early_start(570, 1600, 0) == 570


def test_after_a_compaction_it_moves_up_by_what_the_compaction_left() -> None:
    # 0.3 of the way, from 700 left to the threshold at 1600.
    assert early_start(480, 1600, 700) == 700 + 900 * 480 // 1600
    assert early_start(480, 1600, 700) > 700


def test_a_compaction_that_left_the_threshold_or_more_never_starts_early() -> None:
    assert early_start(480, 1600, 1700) == 1600
