"""Configuration: defaults with no file, a clear message for every mistake, never a traceback."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from openvaala_server.config import ConfigError, load_config


def _load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_config(path)


def test_no_file_means_one_default_agent_on_the_demo_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENVAALA_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    config = load_config()
    assert list(config.agents) == ["default"] and config.default_agent == "default"
    assert config.models[config.agents["default"].model].provider == "demo"


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        (
            "[models.x]\nprovider = 'nope'\ncontext_window = 10\n",
            "models.x.provider",
            "unknown provider",
        ),
        ("[models.x]\nprovider = 'openai'\n", "models.x.context_window", "is required"),
        (
            "[models.x]\nprovider = 'openai'\ncontext_window = 'big'\n",
            "models.x.context_window",
            "whole number",
        ),
        (
            "[models.x]\nprovider = 'openai'\ncontext_window = 100\nmax_output_tokens = 200\n",
            "models.x.max_output_tokens",
            "below context_window",
        ),
        ("[agents.a]\nmodel = 'missing'\n", "agents.a.model", "names no model"),
        (
            "[models.small]\nprovider = 'demo'\ncontext_window = 1000\nmax_output_tokens = 10\n"
            "[agents.a]\nmodel = 'demo'\ncompact_model = 'small'\n",
            "agents.a.compact_model",
            "at least as large",
        ),
        ("default_agent = 'ghost'\n", "default_agent", "names no agent"),
        ("[server]\nport = 70000\n", "server.port", "at most 65535"),
        ("this is not toml", "(syntax)", ""),
    ],
)
def test_mistakes_name_the_file_the_key_and_the_problem(
    tmp_path: Path, text: str, key: str, problem: str
) -> None:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, text)
    message = str(err.value)
    assert str(tmp_path / "config.toml") in message and key in message and problem in message


def test_a_named_config_file_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENVAALA_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_config()


def test_the_server_refuses_a_bad_config_with_a_message_not_a_traceback(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[models.x]\nprovider = 'nope'\ncontext_window = 10\n")
    env = {"OPENVAALA_CONFIG": str(config), "OPENVAALA_HOME": str(tmp_path / "home"), "PATH": ""}
    result = subprocess.run(
        [sys.executable, "-m", "openvaala_server", "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert "models.x.provider" in result.stderr and "Traceback" not in result.stderr


TYPO = "[agents.coder]\ntool = ['read_file']\n"  # `tool`: once silently gave the agent every tool


def _cli_env(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "config.toml"
    config.write_text(TYPO)
    return {
        **os.environ,
        "OPENVAALA_CONFIG": str(config),
        "OPENVAALA_HOME": str(tmp_path / "home"),
        "TERM": "xterm-256color",
    }


def test_serve_refuses_a_typo_naming_the_key_and_the_closest_valid_one(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "openvaala_server", "serve", "--port", "0"],
        env=_cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert (
        f"configuration error: {tmp_path / 'config.toml'}: agents.coder.tool: unknown key; "
        "did you mean `tools`?" in result.stderr
    )
    assert "Traceback" not in result.stderr


def test_the_terminal_ui_prints_the_config_error_and_exits(tmp_path: Path) -> None:
    """`openvaala` in a terminal: the daemon cannot start, so the UI says why and exits."""
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "openvaala_server"],
        env=_cli_env(tmp_path),
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        start_new_session=True,
    )
    os.close(secondary)
    output = bytearray()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if select.select([primary], [], [], 0.5)[0]:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # every end of the terminal is closed: the UI has exited
                break
            if not chunk:
                break
            output += chunk
    else:
        process.kill()
    os.close(primary)
    status = process.wait(timeout=30)
    # Were the file accepted, the UI would have started a daemon on this data directory.
    subprocess.run(
        [sys.executable, "-m", "openvaala_server", "serve", "stop"],
        env=_cli_env(tmp_path),
        capture_output=True,
        timeout=60,
        check=False,
    )
    text = re.sub(
        r"\x1b\[[0-9;?<]*[A-Za-z]|\x1b[()][0-9A-B]|\x1b[=>]", "", output.decode(errors="replace")
    )
    text = " ".join(text.split())  # the terminal wraps the message
    assert status == 1
    assert "agents.coder.tool: unknown key; did you mean `tools`?" in text
    assert "Traceback" not in text
