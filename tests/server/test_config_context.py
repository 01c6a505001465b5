"""The context keys of an agent: compact_threshold, early_compaction, refresh_every
(docs/configuration.md): declared, checked, and every mistake named."""

from __future__ import annotations

from pathlib import Path

import pytest

from openvaala_server.config import Config, ConfigError, load_config


def _load(tmp_path: Path, agent: str) -> Config:
    path = tmp_path / "config.toml"
    path.write_text("[agents.a]\nmodel = 'demo'\n" + agent)
    return load_config(path)


def test_values(tmp_path: Path) -> None:
    a = _load(tmp_path, "compact_threshold = 0.7\nearly_compaction = 0.5\nrefresh_every = 3\n")
    agent = a.agents["a"]
    assert (agent.compact_threshold, agent.early_compaction, agent.refresh_every) == (0.7, 0.5, 3)
    off = _load(tmp_path, "compact_threshold = 0\n").agents["a"]
    assert off.compact_threshold == 0 and off.early_compaction is None
    unset = _load(tmp_path, "").agents["a"]
    assert (unset.compact_threshold, unset.early_compaction, unset.refresh_every) == (
        None,
        None,
        None,
    )
    assert "search_history" in unset.tools


@pytest.mark.parametrize(
    ("agent", "key", "problem"),
    [
        ("compact_threshold = 1.5\n", "compact_threshold", "0 to 1"),
        ("compact_threshold = 'high'\n", "compact_threshold", "a number"),
        ("early_compaction = 0\n", "early_compaction", "above 0"),
        ("compact_threshold = 0.5\nearly_compaction = 0.6\n", "early_compaction", "lower than"),
        ("early_compaction = 0.9\n", "early_compaction", "lower than"),
        ("compact_threshold = 0\nearly_compaction = 0.3\n", "early_compaction", "is 0"),
        ("refresh_every = 0\n", "refresh_every", "at least 1"),
        ("compact_treshold = 0.5\n", "compact_treshold", "compact_threshold"),
    ],
)
def test_mistakes_name_the_key(tmp_path: Path, agent: str, key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, agent)
    message = str(err.value)
    assert f"agents.a.{key}" in message and problem in message
