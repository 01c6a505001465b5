"""A config that cannot widen permissions by a typo: unknown keys, unknown tools and values of
the wrong type are errors naming the file, the key and the closest valid name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from openvaala_server.config import PROVIDER_OPTIONS, PROVIDERS, Config, ConfigError, load_config
from openvaala_server.tools.collab import COLLAB_TOOL_NAMES
from openvaala_server.tools.registry import BUILTIN_TOOLS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def _load(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_config(path)


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, text)
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'config.toml'}: "), message
    return message


ANTHROPIC = "[models.c]\nprovider = 'anthropic'\ncontext_window = 200000\n"


@pytest.mark.parametrize(
    ("text", "key", "suggestion"),
    [
        ("default_agnet = 'a'\n", "default_agnet", "default_agent"),
        ("[model.x]\nprovider = 'demo'\n", "model", "models"),
        ("[server]\nprot = 1\n", "server.prot", "port"),
        ("[retry]\nmax_retry = 3\n", "retry.max_retry", "max_retries"),
        ("[subagents]\nmax_dept = 1\n", "subagents.max_dept", "max_depth"),
        ("[models.x]\nprovder = 'demo'\n", "models.x.provder", "provider"),
        ("[models.x]\nprovider = 'demo'\npace = 0\n", "models.x.pace", "pace_ms"),
        (
            ANTHROPIC + "thinking_budget = 10\n",
            "models.c.thinking_budget",
            "thinking_budget_tokens",
        ),
        ("[agents.a]\ntool = ['read_file']\n", "agents.a.tool", "tools"),
        ("[agents.a]\nsandbx = 'read-only'\n", "agents.a.sandbx", "sandbox"),
        ("[agents.a]\naproval = 'always'\n", "agents.a.aproval", "approval"),
        ("[agents.a]\ndenny = ['rm *']\n", "agents.a.denny", "deny"),
    ],
)
def test_an_unknown_key_in_any_table_is_named_with_the_closest_valid_one(
    tmp_path: Path, text: str, key: str, suggestion: str
) -> None:
    message = _error(tmp_path, text)
    assert f": {key}: unknown key" in message
    assert f"did you mean `{suggestion}`?" in message


def test_an_unknown_key_with_no_close_match_lists_the_valid_keys(tmp_path: Path) -> None:
    message = _error(tmp_path, "[retry]\ncolour = 'blue'\n")
    assert "retry.colour: unknown key" in message
    assert "max_delay_s, max_retries" in message


def test_a_setting_of_another_provider_is_refused_naming_the_providers_it_belongs_to(
    tmp_path: Path,
) -> None:
    message = _error(tmp_path, ANTHROPIC + "num_ctx = 8192\n")
    assert "models.c.num_ctx: is not a setting of provider 'anthropic'" in message
    assert "(only of openai)" in message
    message = _error(tmp_path, "[models.d]\nprovider = 'demo'\nbase_url = 'http://x'\n")
    assert "models.d.base_url: is not a setting of provider 'demo'" in message


def test_an_unknown_tool_names_the_key_the_closest_tool_and_every_valid_one(
    tmp_path: Path,
) -> None:
    message = _error(tmp_path, "[agents.coder]\ntools = ['read_file', 'shel']\n")
    assert "agents.coder.tools: unknown tool 'shel'; did you mean `shell`?" in message
    for name in ("shell", "read_file", "write_file", "spawn_agent", "list_agents"):
        assert name in message


def test_mcp_tools_naming_no_configured_server_are_refused(tmp_path: Path) -> None:
    for name in ("mcp:github", "mcp:*"):
        message = _error(tmp_path, f"[agents.a]\ntools = ['shell', '{name}']\n")
        assert f"agents.a.tools: '{name}' names no MCP server" in message


def test_every_tool_the_daemon_offers_may_be_listed(tmp_path: Path) -> None:
    names = [*BUILTIN_TOOLS, *COLLAB_TOOL_NAMES]
    config = _load(tmp_path, f"[agents.a]\ntools = {names!r}\n")
    assert config.agents["a"].tools == tuple(names)
    assert _load(tmp_path, "[agents.a]\ntools = []\n").agents["a"].tools == ()


@pytest.mark.parametrize(
    ("line", "key", "problem"),
    [
        ("sandbox = 1", "sandbox", 'must be one of "read-only", "workspace", "off"'),
        ("sandbox = 'workspce'", "sandbox", "did you mean `workspace`?"),
        ("sandbox = 'readonly'", "sandbox", "did you mean `read-only`?"),
        ("network = 'yes'", "network", "must be true or false"),
        ("network = 1", "network", "must be true or false"),
        ("approval = true", "approval", 'must be one of "always", "escalate", "never"'),
        ("approval = 'escalation'", "approval", "did you mean `escalate`?"),
        ("allow = 'git status'", "allow", "must be a list of command patterns"),
        ("allow = ['git status', 3]", "allow", "must be a list of command patterns"),
        ("deny = ['']", "deny", "must be a list of command patterns"),
        ("allow = ['make && make test']", "allow", "holds a shell control operator"),
        ("allow = ['git log | head']", "allow", "would never match"),
        ("tools = 'shell'", "tools", "must be a list of tool names"),
        ("description = 3", "description", "must be a string"),
        ("instructions = ['x']", "instructions", "must be a string"),
    ],
)
def test_an_agent_value_of_the_wrong_type_is_an_error(
    tmp_path: Path, line: str, key: str, problem: str
) -> None:
    message = _error(tmp_path, f"[agents.a]\n{line}\n")
    assert f"agents.a.{key}: " in message and problem in message


@pytest.mark.parametrize(
    ("lines", "key", "problem"),
    [
        ("provider = 'demo'\npace_ms = 'fast'", "pace_ms", "must be a number"),
        ("provider = 'demo'\npace_ms = -1", "pace_ms", "must not be negative"),
        ("provider = 'openai'\ncontext_window = 8192\nheaders = 'x'", "headers", "must be a table"),
        (
            "provider = 'openai'\ncontext_window = 8192\nheaders = {X-Org = 1}",
            "headers.X-Org",
            "must be a string",
        ),
        (
            "provider = 'openai'\ncontext_window = 8192\nread_timeout_s = 0",
            "read_timeout_s",
            "above 0",
        ),
        ("provider = 'openai'\ncontext_window = 8192\nollama = 'yes'", "ollama", "true or false"),
        ("provider = 'openai'\ncontext_window = 8192\nnum_ctx = 1.5", "num_ctx", "whole number"),
        (
            "provider = 'openai'\ncontext_window = 8192\nmax_tokens_field = 'max_token'",
            "max_tokens_field",
            "did you mean `max_tokens`?",
        ),
        (
            "provider = 'openai_responses'\ncontext_window = 8192\nreasoning_effort = 2",
            "reasoning_effort",
            "must be a string",
        ),
        (
            "provider = 'openai_responses'\ncontext_window = 8192\nreasoning_context = 'all_turn'",
            "reasoning_context",
            "did you mean `all_turns`?",
        ),
        (
            "provider = 'anthropic'\ncontext_window = 100\nmax_output_tokens = 50\n"
            "thinking_budget_tokens = 50",
            "thinking_budget_tokens",
            "must be below max_output_tokens",
        ),
        ("provider = 'openai'\ncontext_window = 8192\napi_key_env = 1", "api_key_env", "a string"),
        ("provider = 'opneai'", "provider", "did you mean `openai`?"),
    ],
)
def test_a_model_value_of_the_wrong_type_is_an_error(
    tmp_path: Path, lines: str, key: str, problem: str
) -> None:
    message = _error(tmp_path, f"[models.m]\n{lines}\n")
    assert f"models.m.{key}: " in message and problem in message


def test_every_documented_provider_option_loads(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        """
[models.demo]
provider = "demo"
pace_ms = 0

[models.chat]
provider = "openai"
base_url = "http://localhost:11434/v1"
api_key_env = "SOME_KEY"
context_window = 32768
max_output_tokens = 4096
headers = { X-Org = "me" }
read_timeout_s = 60
max_tokens_field = "max_completion_tokens"
reasoning_effort = "low"
ollama = true
num_ctx = 16384

[models.responses]
provider = "openai_responses"
context_window = 200000
headers = {}
read_timeout_s = 120.5
reasoning_effort = "medium"
reasoning_summary = "auto"
reasoning_context = "all_turns"

[models.claude]
provider = "anthropic"
context_window = 200000
max_output_tokens = 16000
headers = { X-Proxy = "1" }
read_timeout_s = 300
thinking_budget_tokens = 8000
""",
    )
    assert config.models["demo"].options == {"pace_ms": 0}
    assert config.models["chat"].options == {
        "headers": {"X-Org": "me"},
        "read_timeout_s": 60,
        "max_tokens_field": "max_completion_tokens",
        "reasoning_effort": "low",
        "ollama": True,
        "num_ctx": 16384,
    }
    assert config.models["responses"].reasoning_context == "all_turns"
    assert config.models["responses"].options["reasoning_summary"] == "auto"
    assert config.models["claude"].options["thinking_budget_tokens"] == 8000


def _doc_toml_blocks() -> list[str]:
    return re.findall(r"```toml\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)


def test_the_docs_have_toml_examples() -> None:
    assert len(_doc_toml_blocks()) >= 5


@pytest.mark.parametrize("index", range(len(_doc_toml_blocks())))
def test_every_toml_example_in_the_configuration_docs_loads(tmp_path: Path, index: int) -> None:
    _load(tmp_path, _doc_toml_blocks()[index])


def test_an_agents_sandbox_and_approval_settings_load(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        """
[agents.careful]
sandbox = "read-only"
network = true
approval = "always"
allow = ["git status", "git diff*"]
deny = ["rm -rf /*", "curl * | sh"]

[agents.plain]
""",
    )
    careful = config.agents["careful"].permissions
    assert (careful.sandbox, careful.network, careful.approval) == ("read-only", True, "always")
    assert careful.allow == ("git status", "git diff*")
    assert careful.deny == ("rm -rf /*", "curl * | sh")
    plain = config.agents["plain"].permissions
    assert (plain.sandbox, plain.network, plain.approval) == ("workspace", False, "escalate")
    assert plain.allow == plain.deny == ()


MODELS = Path(__file__).resolve().parents[2] / "openvaala_server" / "models"
PROVIDER_SOURCES = {
    "demo": ("demo.py",),
    "openai": ("openai_chat.py", "http.py"),
    "openai_responses": ("openai_responses.py", "http.py"),
    "anthropic": ("anthropic.py", "http.py"),
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_accepted_options_are_the_ones_the_provider_reads(provider: str) -> None:
    """A provider reading an option the config refuses, or the reverse, is caught here."""
    source = "".join((MODELS / name).read_text() for name in PROVIDER_SOURCES[provider])
    read = set(re.findall(r'options\.get\("(\w+)"', source))
    accepted = set(PROVIDER_OPTIONS[provider])
    assert read <= accepted
    assert {name for name in accepted if f'"{name}"' not in source} == set()
