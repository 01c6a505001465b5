"""`[[hooks]]` in config.toml: read into `HookConfig`s, and every mistake an error naming the
entry and the key (docs/configuration.md, "Hooks")."""

from __future__ import annotations

from pathlib import Path

import pytest

from openvaala_server.config import ConfigError, load_config
from openvaala_server.domain.hooks import HookConfig


def _load(tmp_path: Path, text: str) -> tuple[HookConfig, ...]:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_config(path).hooks


def test_hooks_are_read_in_order_with_their_defaults(tmp_path: Path) -> None:
    hooks = _load(
        tmp_path,
        '[[hooks]]\nevent = "pre_tool"\nmatcher = "mcp__*"\ncommand = ["check", "-q"]\n'
        '[[hooks]]\nevent = "turn_end"\ncommand = ["notify"]\ntimeout_s = 5\nsandbox = false\n',
    )
    assert hooks == (
        HookConfig(event="pre_tool", command=("check", "-q"), matcher="mcp__*"),
        HookConfig(event="turn_end", command=("notify",), timeout_s=5.0, sandbox=False),
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[[hooks]]\nevent = "pre_tool"\ncommand = ["x"]\ntimout_s = 1\n', "hooks[0].timout_s"),
        ('[[hooks]]\nevent = "before_tool"\ncommand = ["x"]\n', "hooks[0].event"),
        ('[[hooks]]\nevent = "pre_tool"\n', "hooks[0].command: is required"),
        ('[[hooks]]\nevent = "pre_tool"\ncommand = []\n', "hooks[0].command: must name"),
        ('[[hooks]]\nevent = "pre_tool"\ncommand = "x"\n', "hooks[0].command: must be a list"),
        ('[[hooks]]\nevent = "turn_end"\nmatcher = "shell"\ncommand = ["x"]\n', "hooks[0].matcher"),
        ('[[hooks]]\nevent = "pre_tool"\ncommand = ["x"]\ntimeout_s = 0\n', "hooks[0].timeout_s"),
        ('hooks = "x"\n', "hooks: must be an array of tables"),
    ],
)
def test_a_hook_mistake_names_its_key(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, text)
    assert expected in str(err.value)
