"""`[mcp_servers.NAME]` tables and `mcp:NAME` in an agent's tools: strict like the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from openvaala_server.config import Config, ConfigError, load_config


def _load(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_config(path)


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, text)
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'config.toml'}: "), message
    return message.removeprefix(f"{tmp_path / 'config.toml'}: ")


FULL = """
[mcp_servers.files]
command = "uvx"
args = ["some-mcp-server", "--root", "."]
env = { KEY = "value" }
cwd = "/tmp"
enabled_tools = ["read", "list"]
disabled_tools = ["list"]
startup_timeout_s = 5
tool_timeout_s = 30.5
trust = true

[mcp_servers.web]
url = "http://127.0.0.1:8000/mcp"
headers = { X-Team = "blue" }
bearer_token_env = "WEB_TOKEN"

[agents.a]
tools = ["shell", "mcp:files"]

[agents.b]
tools = ["mcp:*"]
"""


def test_every_setting_is_read(tmp_path: Path) -> None:
    config = _load(tmp_path, FULL)
    files, web = config.mcp_servers["files"], config.mcp_servers["web"]
    assert (files.command, files.args, files.env, files.cwd) == (
        "uvx",
        ("some-mcp-server", "--root", "."),
        {"KEY": "value"},
        "/tmp",
    )
    assert (files.enabled_tools, files.disabled_tools) == (("read", "list"), ("list",))
    assert (files.startup_timeout_s, files.tool_timeout_s, files.trust) == (5.0, 30.5, True)
    assert files.offers("read") and not files.offers("list") and not files.offers("write")
    assert (web.url, web.headers, web.bearer_token_env) == (
        "http://127.0.0.1:8000/mcp",
        {"X-Team": "blue"},
        "WEB_TOKEN",
    )
    assert (web.enabled_tools, web.trust, web.startup_timeout_s) == (None, False, 10.0)
    assert config.agents["a"].tools == ("shell", "mcp:files")
    assert config.agents["b"].tools == ("mcp:*",)


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('comand = "x"', "mcp_servers.s.comand: unknown key; did you mean `command`?"),
        ('command = "x"\nenabled_tool = ["a"]', "did you mean `enabled_tools`?"),
        ("args = []", "mcp_servers.s.command: set exactly one of `command` (stdio) or `url`"),
        (
            'command = "x"\nurl = "http://h/mcp"',
            "mcp_servers.s.command: set exactly one of `command` (stdio) or `url`",
        ),
        (
            'command = "x"\nheaders = { A = "b" }',
            "mcp_servers.s.headers: is not a setting of a server reached by `command` (stdio)",
        ),
        (
            'url = "http://h/mcp"\nenv = { A = "b" }',
            "mcp_servers.s.env: is not a setting of a server reached by `url` (HTTP)",
        ),
        ('url = "h/mcp"', "mcp_servers.s.url: must start with http:// or https://"),
        ('command = "x"\nargs = "a b"', "mcp_servers.s.args: must be a list of strings"),
        ('command = "x"\nenv = { A = 1 }', "mcp_servers.s.env.A: must be a string"),
        ('command = "x"\ntrust = "yes"', "mcp_servers.s.trust: must be true or false"),
        ('command = "x"\ntool_timeout_s = 0', "mcp_servers.s.tool_timeout_s: must be above 0"),
        (
            'command = "x"\nstartup_timeout_s = "10"',
            "mcp_servers.s.startup_timeout_s: must be a number",
        ),
        ('command = "x"\nenabled_tools = "a"', "mcp_servers.s.enabled_tools: must be a list"),
    ],
)
def test_a_wrong_setting_names_the_key_and_the_problem(
    tmp_path: Path, table: str, problem: str
) -> None:
    assert problem in _error(tmp_path, f"[mcp_servers.s]\n{table}\n")


def test_a_server_name_the_model_could_not_read_back_is_refused(tmp_path: Path) -> None:
    message = _error(tmp_path, '[mcp_servers."a__b"]\ncommand = "x"\n')
    assert message == "mcp_servers.a__b: a server name is letters, digits, - and _ (no `__`)"


def test_an_agent_naming_an_unconfigured_server_is_refused_with_the_closest(
    tmp_path: Path,
) -> None:
    text = '[mcp_servers.github]\ncommand = "x"\n[agents.a]\ntools = ["mcp:githb"]\n'
    assert _error(tmp_path, text) == (
        "agents.a.tools: 'mcp:githb' names no MCP server; did you mean `github`? "
        "(configured in [mcp_servers]: github)"
    )
