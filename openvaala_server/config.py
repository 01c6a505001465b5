"""Loading `config.toml`: agents, models, retry and server settings.

`$OPENVAALA_CONFIG`, else `$XDG_CONFIG_HOME/openvaala/config.toml`, else
`~/.config/openvaala/config.toml`. No file means one agent `default` on the offline `demo` model.
Every problem is a `ConfigError` naming the file, the key and what is wrong — never a traceback.
Nothing is ignored: an unknown key, tool name or provider option is an error with the closest
valid name, because a typo in an agent's table (`tool = [...]`) must never widen what it may do.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Final, TypeVar, overload

from openvaala_server import config_prompt
from openvaala_server.config_context import CONTEXT_KEYS, parse_context_keys
from openvaala_server.config_prompt import BaseInstructions, ProjectDocs
from openvaala_server.discovery import config_path as config_path  # the daemon's name for it
from openvaala_server.domain import catalog, tool_names
from openvaala_server.domain.approvals import has_control_operator
from openvaala_server.domain.hooks import HOOK_EVENTS, HOOK_TOOL_EVENTS, HookConfig
from openvaala_server.domain.permissions import (
    APPROVAL_MODES,
    LIMIT_KEYS,
    SANDBOX_MODES,
    Limits,
    Permissions,
)

T = TypeVar("T")
S = TypeVar("S", bound=str)
PROVIDERS = catalog.NAMES
DEFAULT_TOOLS = (
    "shell",
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "grep",
    "glob",
    "apply_patch",
    "update_plan",
    "spawn_agent",
    "search_history",
    "remember",
)
DEFAULT_PORT = 7450
# A model whose window the daemon reads from its server (models/probe.py) carries this one until
# it has asked, and keeps it if the server cannot tell.
PENDING_WINDOW = 8192
WINDOW_PENDING = "pending"
# A catalog model's default `max_output_tokens`: its maximum, but at most this much, so that the
# conversation keeps most of the window (an explicit value may go up to the maximum).
CATALOG_MAX_OUTPUT = 32_000


class ConfigError(Exception):
    def __init__(self, path: Path | None, key: str, problem: str) -> None:
        where = str(path) if path else "built-in configuration"
        super().__init__(f"{where}: {key}: {problem}")
        self.path = path
        self.key = key
        self.problem = problem


@dataclass(frozen=True)
class ModelConfig:
    name: str
    provider: str
    model: str
    context_window: int
    max_output_tokens: int
    base_url: str | None = None
    api_key_env: str | None = None
    reasoning_context: str | None = None
    # Whether the model accepts images (docs/configuration.md); without it images are refused at
    # send time and read_file answers an image with a notice.
    vision: bool = False
    # Provider-specific settings (`pace_ms` for demo, `num_ctx` for Ollama, `headers`, …), each
    # checked against PROVIDER_OPTIONS when the file is loaded.
    options: dict[str, object] = field(default_factory=dict)
    # Whether the model reasons before it answers (the catalog's word; docs/configuration.md).
    reasoning: bool = False
    # A file holding the API key (0600, written by `openvaala setup`), instead of api_key_env;
    # absolute (the file's value is relative to the config file's directory).
    api_key_file: str | None = None
    # Where `context_window` came from: "config", "catalog", "server: …" (read from a local
    # server by the daemon, models/probe.py) or WINDOW_PENDING until the daemon asked.
    window_source: str = "config"


@dataclass(frozen=True)
class AgentConfig:
    name: str
    description: str
    model: str
    compact_model: str | None = None
    instructions: str = ""
    tools: tuple[str, ...] = DEFAULT_TOOLS
    # Whether `model` was written in the file (a subagent of an agent that names none runs on its
    # parent's model) rather than filled in with the default.
    model_set: bool = True
    permissions: Permissions = field(default_factory=Permissions)
    # Context steering (docs/configuration.md): compaction at this fraction of the usable window
    # (None: the default threshold; 0: never automatically), a summary prepared in the
    # background from `early_compaction` on, and a refresh summary every `refresh_every` replies.
    compact_threshold: float | None = None
    early_compaction: float | None = None
    refresh_every: int | None = None
    # What comes before `instructions` (config_prompt.py): the built-in prompt unless replaced.
    base_instructions: BaseInstructions = field(default_factory=BaseInstructions)


@dataclass(frozen=True)
class RetryConfig:
    max_retries: int = 10  # retries after the first call of a temporary failure
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0


@dataclass(frozen=True)
class ServerConfig:
    port: int = DEFAULT_PORT
    # Room for a message with its images (4 × 5 MiB, base64): docs/protocol.md, input/send.
    max_frame_bytes: int = 32 * 1024 * 1024
    tool_output_limit: int = 20_000
    client_queue_limit: int = 1000  # events waiting for one slow client before it is dropped
    replay_events: int = 10_000  # events kept per conversation for `afterSeq` resumption
    loaded_conversations: int = 64  # kept in memory while nobody watches them
    web_session_idle_hours: int = 168  # a browser session unused this long ends (0: never)


@dataclass(frozen=True)
class CheckpointConfig:
    """`[checkpoints]`: the files each turn changed, kept to restore them (docs/storage.md)."""

    enabled: bool = True
    max_mb: int = 512  # the snapshot store of one conversation; the oldest turns go first
    max_file_mb: int = 10  # a larger file is not captured (the call says so in the report)
    snapshot_timeout_s: float = 20.0  # a whole-tree snapshot (around `shell`) taking longer
    max_files: int = 100_000  # a working directory with more is not snapshot whole (`shell`)
    survey_wait_s: float = 2.0  # how long a `shell` call waits for that count (then uncaptured)


@dataclass(frozen=True)
class SubagentConfig:
    max_depth: int = 3
    max_concurrent: int = 8
    wait_timeout_s: float = 600.0


@dataclass(frozen=True)
class McpServerConfig:
    """One `[mcp_servers.NAME]` table: how to reach an MCP server and which of its tools to offer.

    Exactly one transport: `command` (stdio: the daemon runs it) or `url` (streamable HTTP).
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    # The only variables the server gets besides PATH, HOME and LANG: never the daemon's secrets.
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # The variable holding a token sent as `Authorization: Bearer …` (read when the server starts).
    bearer_token_env: str | None = None
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] = ()
    startup_timeout_s: float = 10.0
    tool_timeout_s: float = 60.0
    # The largest message read from a streamable-HTTP server (the SDK's default is 1 MiB): a
    # bigger result fails that call alone, with this setting named.
    max_result_mb: int = 64
    # True: calls never ask; else they follow the agent's approval rules, asking at least once
    # per conversation and tool.
    trust: bool = False

    def offers(self, tool: str) -> bool:
        """Whether the server's tool `tool` passes `enabled_tools` and `disabled_tools`."""
        if self.enabled_tools is not None and tool not in self.enabled_tools:
            return False
        return tool not in self.disabled_tools


@dataclass(frozen=True)
class WebFetchConfig:
    """`[web_fetch]`: the limits of the `web_fetch` tool (docs/configuration.md)."""

    # Hosts (`name` or `name:port`) it may reach although they are loopback or private.
    allow_private_hosts: tuple[str, ...] = ()
    max_mb: int = 5
    timeout_s: float = 30.0


@dataclass(frozen=True)
class Config:
    default_agent: str
    models: dict[str, ModelConfig]
    agents: dict[str, AgentConfig]
    retry: RetryConfig = RetryConfig()
    server: ServerConfig = ServerConfig()
    subagents: SubagentConfig = SubagentConfig()
    checkpoints: CheckpointConfig = CheckpointConfig()
    path: Path | None = None
    mcp_servers: dict[str, McpServerConfig] = field(default_factory=dict)
    project_docs: ProjectDocs = field(default_factory=ProjectDocs)

    def secret_env_names(self) -> frozenset[str]:
        """Every variable a setting names as holding a secret (a model's `api_key_env`, an MCP
        server's `bearer_token_env`): kept out of every tool's environment (docs/security.md)."""
        names = {m.api_key_env for m in self.models.values() if m.api_key_env}
        names.update(s.bearer_token_env for s in self.mcp_servers.values() if s.bearer_token_env)
        return frozenset(names)

    hooks: tuple[HookConfig, ...] = ()
    web_fetch: WebFetchConfig = WebFetchConfig()


DEMO_MODEL = ModelConfig(
    name="demo",
    provider="demo",
    model="demo",
    context_window=32_000,
    max_output_tokens=4_000,
    vision=True,  # the demo answers an image with what it is (kind and size)
    options={"pace_ms": 30},
)
DEFAULT_AGENT = AgentConfig(
    name="default",
    description="A general assistant that can run commands and edit files",
    model="demo",
    instructions="You are OpenVaala's built-in demo agent.",
)


def default_config() -> Config:
    return Config(
        default_agent="default", models={"demo": DEMO_MODEL}, agents={"default": DEFAULT_AGENT}
    )


def load_config(path: Path | None = None) -> Config:
    explicit = path is not None or bool(os.environ.get("OPENVAALA_CONFIG"))
    path = path or config_path()
    if not path.exists():
        if explicit:  # a file the user named must exist; a missing default means "no config"
            raise ConfigError(path, "(file)", "does not exist")
        return default_config()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, "(syntax)", str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, "(file)", f"cannot read: {exc}") from None
    return parse_config(raw, path)


def known_tool_names() -> tuple[str, ...]:
    """Every name an agent's `tools` may list: the built-in tools and the daemon's own."""
    return tool_names.KNOWN


def _did_you_mean(word: str, choices: Collection[str]) -> str:
    """'; did you mean `tools`?' for the closest of `choices`, or '' when none is close."""
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean `{close[0]}`?" if close else ""


class _Reader:
    """Typed access to one TOML table, raising `ConfigError` with the full key path."""

    def __init__(self, path: Path | None, prefix: str, table: object) -> None:
        if not isinstance(table, dict):
            raise ConfigError(path, prefix, "must be a table")
        self.path, self.prefix, self.table = path, prefix, table

    def key(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def fail(self, key: str, problem: str) -> ConfigError:
        return ConfigError(self.path, self.key(key), problem)

    def only(self, allowed: Collection[str]) -> None:
        """Refuse any key not in `allowed`, suggesting the closest one."""
        for key in self.table:
            if key not in allowed:
                hint = _did_you_mean(key, allowed) or f" (valid: {', '.join(sorted(allowed))})"
                raise self.fail(key, "unknown key" + hint)

    def _get(self, key: str, kinds: tuple[type, ...], kind_name: str, required: bool) -> object:
        """The value if it has one of `kinds`, None when absent (and not required)."""
        if key not in self.table:
            if required:
                raise self.fail(key, "is required")
            return None
        value: object = self.table[key]
        if isinstance(value, bool) and bool not in kinds:
            raise self.fail(key, f"must be {kind_name}")
        if not isinstance(value, kinds):
            raise self.fail(key, f"must be {kind_name}")
        return value

    # Each getter: with `_REQUIRED` the value or an error; otherwise the value or `default`.
    @overload
    def string(self, key: str, default: _Required) -> str: ...
    @overload
    def string(self, key: str, default: T = ...) -> str | T: ...
    def string(self, key: str, default: object = None) -> object:
        value = self._get(key, (str,), "a string", default is _REQUIRED)
        return default if value is None else value

    @overload
    def boolean(self, key: str, default: _Required) -> bool: ...
    @overload
    def boolean(self, key: str, default: T = ...) -> bool | T: ...
    def boolean(self, key: str, default: object = None) -> object:
        value = self._get(key, (bool,), "true or false", default is _REQUIRED)
        return default if value is None else value

    @overload
    def integer(self, key: str, default: _Required, minimum: int = ...) -> int: ...
    @overload
    def integer(self, key: str, default: T = ..., minimum: int = ...) -> int | T: ...
    def integer(self, key: str, default: object = None, minimum: int = 0) -> object:
        value = self._get(key, (int,), "a whole number", default is _REQUIRED)
        if value is None:
            return default
        assert isinstance(value, int)
        if value < minimum:
            raise self.fail(key, f"must be at least {minimum}")
        return value

    @overload
    def number(self, key: str, default: float) -> float: ...
    @overload
    def number(self, key: str, default: None = ...) -> float | None: ...
    def number(self, key: str, default: float | None = None) -> float | None:
        value = self._get(key, (int, float), "a number", False)
        if value is None:
            return None if default is None else float(default)
        assert isinstance(value, int | float)
        if value < 0:
            raise self.fail(key, "must not be negative")
        return float(value)

    @overload
    def choice(self, key: str, choices: Collection[S], default: _Required) -> S: ...
    @overload
    def choice(self, key: str, choices: Collection[S], default: T = ...) -> S | T: ...
    def choice(self, key: str, choices: Collection[S], default: object = None) -> object:
        quoted = ", ".join(f'"{c}"' for c in choices)
        value = self._get(key, (str,), f"one of {quoted}", default is _REQUIRED)
        if value is None:
            return default
        assert isinstance(value, str)
        for choice in choices:
            if value == choice:
                return choice
        raise self.fail(key, f"must be one of {quoted}" + _did_you_mean(value, choices))

    @overload
    def strings(self, key: str, default: _Required, kind_name: str) -> list[str]: ...
    @overload
    def strings(self, key: str, default: T, kind_name: str) -> list[str] | T: ...
    def strings(self, key: str, default: object, kind_name: str) -> object:
        """A list of non-empty strings."""
        value = self._get(key, (list,), kind_name, default is _REQUIRED)
        if value is None:
            return default
        assert isinstance(value, list)
        if not all(isinstance(x, str) and x.strip() for x in value):
            raise self.fail(key, f"must be {kind_name}")
        return [str(x) for x in value]

    def table_of(self, key: str) -> dict[str, object]:
        value = self._get(key, (dict,), "a table", False)
        return dict(value) if isinstance(value, dict) else {}


class _Required(Enum):
    """No default: the key must be there."""

    REQUIRED = "required"


_REQUIRED: Final = _Required.REQUIRED
_TOP_KEYS = (
    "default_agent",
    "models",
    "agents",
    "retry",
    "server",
    "subagents",
    "mcp_servers",
    "checkpoints",
    *config_prompt.TOP_KEYS,
    "hooks",
    "web_fetch",
)


def _keys(cls: type) -> tuple[str, ...]:
    """A settings table's keys: the fields of the dataclass it is read into."""
    return tuple(f.name for f in fields(cls))


def parse_config(raw: dict[str, object], path: Path | None = None) -> Config:
    top = _Reader(path, "", raw)
    top.only(_TOP_KEYS)
    models: dict[str, ModelConfig] = {"demo": DEMO_MODEL}
    for name, table in top.table_of("models").items():
        models[name] = _parse_model(path, name, table)
    mcp_servers = {
        name: _parse_mcp_server(path, name, table)
        for name, table in top.table_of("mcp_servers").items()
    }
    tool_names = known_tool_names()
    agents: dict[str, AgentConfig] = {}
    for name, table in top.table_of("agents").items():
        agents[name] = _parse_agent(path, name, table, models, tool_names, mcp_servers)
    if not agents:
        agents["default"] = DEFAULT_AGENT
    default_agent = top.string("default_agent", next(iter(agents)))
    if default_agent not in agents:
        raise ConfigError(path, "default_agent", f"names no agent (have: {', '.join(agents)})")
    return Config(
        default_agent=default_agent,
        models=models,
        agents=agents,
        retry=_parse_retry(_Reader(path, "retry", top.table_of("retry"))),
        server=_parse_server(_Reader(path, "server", top.table_of("server"))),
        subagents=_parse_subagents(_Reader(path, "subagents", top.table_of("subagents"))),
        checkpoints=_parse_checkpoints(_Reader(path, "checkpoints", top.table_of("checkpoints"))),
        path=path,
        mcp_servers=mcp_servers,
        project_docs=config_prompt.parse_project_docs(top),
        hooks=_parse_hooks(path, raw.get("hooks", [])),
        web_fetch=_parse_web_fetch(_Reader(path, "web_fetch", top.table_of("web_fetch"))),
    )


def _parse_server(t: _Reader) -> ServerConfig:
    t.only(_keys(ServerConfig))
    server = ServerConfig(
        port=t.integer("port", DEFAULT_PORT),
        max_frame_bytes=t.integer("max_frame_bytes", ServerConfig.max_frame_bytes, minimum=1024),
        tool_output_limit=t.integer("tool_output_limit", ServerConfig.tool_output_limit, 100),
        client_queue_limit=t.integer("client_queue_limit", ServerConfig.client_queue_limit, 1),
        replay_events=t.integer("replay_events", ServerConfig.replay_events, 0),
        loaded_conversations=t.integer(
            "loaded_conversations", ServerConfig.loaded_conversations, 1
        ),
        web_session_idle_hours=t.integer(
            "web_session_idle_hours", ServerConfig.web_session_idle_hours, 0
        ),
    )
    if server.port > 65535:
        raise t.fail("port", "must be at most 65535")
    return server


def _parse_retry(t: _Reader) -> RetryConfig:
    t.only(_keys(RetryConfig))
    return RetryConfig(
        max_retries=t.integer("max_retries", RetryConfig.max_retries, minimum=0),
        base_delay_s=t.number("base_delay_s", RetryConfig.base_delay_s),
        max_delay_s=t.number("max_delay_s", RetryConfig.max_delay_s),
    )


def _parse_checkpoints(t: _Reader) -> CheckpointConfig:
    t.only(_keys(CheckpointConfig))
    return CheckpointConfig(
        enabled=t.boolean("enabled", CheckpointConfig.enabled),
        max_mb=t.integer("max_mb", CheckpointConfig.max_mb, minimum=1),
        max_file_mb=t.integer("max_file_mb", CheckpointConfig.max_file_mb, minimum=1),
        snapshot_timeout_s=t.number("snapshot_timeout_s", CheckpointConfig.snapshot_timeout_s),
        max_files=t.integer("max_files", CheckpointConfig.max_files, minimum=1),
        survey_wait_s=t.number("survey_wait_s", CheckpointConfig.survey_wait_s),
    )


def _parse_subagents(t: _Reader) -> SubagentConfig:
    t.only(_keys(SubagentConfig))
    return SubagentConfig(
        max_depth=t.integer("max_depth", SubagentConfig.max_depth),
        max_concurrent=t.integer("max_concurrent", SubagentConfig.max_concurrent, minimum=1),
        wait_timeout_s=t.number("wait_timeout_s", SubagentConfig.wait_timeout_s),
    )


# -- models -----------------------------------------------------------------------------------

_OptionReader = Callable[[_Reader, str], object]


def _positive(t: _Reader, key: str) -> object:
    value = t.number(key)
    if value == 0:
        raise t.fail(key, "must be above 0")
    return value


def _headers(t: _Reader, key: str) -> object:
    value = t.table_of(key)
    for name, text in value.items():
        if not isinstance(text, str):
            raise t.fail(f"{key}.{name}", "must be a string")
    return value


def _option_reader(kind: catalog.OptionKind) -> _OptionReader:
    if isinstance(kind, catalog.Choice):
        values = kind.values
        return lambda t, k: t.choice(k, values)
    readers: dict[str, _OptionReader] = {
        "string": _Reader.string,
        "boolean": _Reader.boolean,
        "number": _Reader.number,
        "positive": _positive,
        "count": lambda t, k: t.integer(k, minimum=1),
        "headers": _headers,
    }
    return readers[kind]


# The settings each provider reads from `ModelConfig.options` (domain/catalog.py); any other key
# in a model's table is an error.
PROVIDER_OPTIONS: dict[str, dict[str, _OptionReader]] = {
    kind.name: {key: _option_reader(k) for key, k in (kind.options or {}).items()}
    for kind in catalog.KINDS
}
# The `ModelConfig` fields each provider reads, besides provider, model and the token limits.
_PROVIDER_FIELDS: dict[str, tuple[str, ...]] = {kind.name: kind.fields for kind in catalog.KINDS}
_MODEL_FIELDS = ("provider", "model", "context_window", "max_output_tokens", "vision")


def _model_keys(provider: str) -> tuple[str, ...]:
    return (*_MODEL_FIELDS, *_PROVIDER_FIELDS[provider], *PROVIDER_OPTIONS[provider])


def _parse_model(path: Path | None, name: str, table: object) -> ModelConfig:
    t = _Reader(path, f"models.{name}", table)
    _check_model_keys(t)
    provider = t.string("provider", _REQUIRED)
    if provider not in PROVIDERS:
        raise t.fail(
            "provider",
            f"unknown provider {provider!r} (one of {', '.join(PROVIDERS)})"
            + _did_you_mean(provider, PROVIDERS),
        )
    model = t.string("model", name)
    base_url = t.string("base_url")
    known = catalog.known_model(provider, model)
    window, max_out, source = _model_limits(t, provider, model, base_url, known)
    options = {
        key: read(t, key) for key, read in PROVIDER_OPTIONS[provider].items() if key in t.table
    }
    budget = options.get("thinking_budget_tokens")
    if isinstance(budget, int) and budget >= max_out:
        raise t.fail("thinking_budget_tokens", "must be below max_output_tokens")
    return ModelConfig(
        name=name,
        provider=provider,
        model=model,
        context_window=window,
        max_output_tokens=max_out,
        base_url=base_url,
        api_key_env=t.string("api_key_env"),
        reasoning_context=t.choice("reasoning_context", ("all_turns", "current_turn")),
        vision=t.boolean("vision", provider == "demo" or (known is not None and known.vision)),
        options=options,
        reasoning=known is not None and known.reasoning,
        api_key_file=_key_file(t, path),
        window_source=source,
    )


def _key_file(t: _Reader, path: Path | None) -> str | None:
    """`api_key_file`, relative to the config file's directory; never with `api_key_env`."""
    name = t.string("api_key_file")
    if name is None:
        return None
    if "api_key_env" in t.table:
        raise t.fail("api_key_file", "set either api_key_env or api_key_file, not both")
    file = Path(name).expanduser()
    if not file.is_absolute() and path is not None:
        file = path.parent / file
    return str(file)


def _model_limits(
    t: _Reader,
    provider: str,
    model: str,
    base_url: str | None,
    known: catalog.KnownModel | None,
) -> tuple[int, int, str]:
    """(context_window, max_output_tokens, where the window came from): the table's values
    win, then the catalog's; a local server's window is asked by the daemon (models/probe.py)."""
    if provider == "demo":
        default: tuple[int, int, str] = (
            DEMO_MODEL.context_window,
            DEMO_MODEL.max_output_tokens,
            "config",
        )
    elif known is not None:
        default = (
            known.context_window,
            min(known.max_output_tokens, CATALOG_MAX_OUTPUT),
            "catalog",
        )
    elif catalog.probed_server(provider, base_url):
        default = (PENDING_WINDOW, 4096, WINDOW_PENDING)
    else:
        default = (0, 4096, "config")
    window = t.integer("context_window", None, minimum=1)
    if window is None and not default[0]:
        raise t.fail(
            "context_window",
            f"is required: {model!r} is not in the catalog of known models (docs/configuration.md)",
        )
    source = "config" if window is not None else default[2]
    window = default[0] if window is None else window
    max_out = t.integer("max_output_tokens", default[1], minimum=1)
    if max_out >= window and source != WINDOW_PENDING:
        raise t.fail("max_output_tokens", "must be below context_window")
    return window, max_out, source


def _check_model_keys(t: _Reader) -> None:
    """Refuse a key no provider reads, or one another provider reads but this one would ignore."""
    every = {key for provider in PROVIDERS for key in _model_keys(provider)}
    provider = t.table.get("provider")
    own = _model_keys(provider) if provider in PROVIDERS else tuple(every)
    for key in t.table:
        if key in own:
            continue
        if key in every:
            owners = [p for p in PROVIDERS if key in _model_keys(p)]
            raise t.fail(
                key, f"is not a setting of provider {provider!r} (only of {', '.join(owners)})"
            )
        hint = _did_you_mean(key, own) or _did_you_mean(key, every)
        raise t.fail(key, "unknown key" + (hint or f" (valid: {', '.join(sorted(own))})"))


# -- agents -----------------------------------------------------------------------------------

_AGENT_KEYS = (
    "description",
    "model",
    "compact_model",
    "instructions",
    "tools",
    "sandbox",
    "network",
    "approval",
    "allow",
    "deny",
    "limits",
    *CONTEXT_KEYS,
    *config_prompt.AGENT_KEYS,
)


def _parse_agent(
    path: Path | None,
    name: str,
    table: object,
    models: dict[str, ModelConfig],
    tool_names: Collection[str],
    mcp_servers: Collection[str] = (),
) -> AgentConfig:
    t = _Reader(path, f"agents.{name}", table)
    t.only(_AGENT_KEYS)
    model_set = "model" in t.table
    model = t.string("model", "demo")
    if model not in models:
        raise t.fail("model", f"names no model (have: {', '.join(models)})")
    compact_model = t.string("compact_model")
    if compact_model is not None:
        if compact_model not in models:
            raise t.fail("compact_model", f"names no model (have: {', '.join(models)})")
        if models[compact_model].context_window < models[model].context_window:
            raise t.fail(
                "compact_model",
                "its context_window must be at least as large as the agent's model's",
            )
    return AgentConfig(
        name=name,
        permissions=_parse_permissions(t),
        description=t.string("description", ""),
        model=model,
        compact_model=compact_model,
        instructions=t.string("instructions", ""),
        tools=_parse_tools(t, tool_names, mcp_servers),
        model_set=model_set,
        base_instructions=config_prompt.parse_base_instructions(t, path),
        **parse_context_keys(t),
    )


def _parse_tools(
    t: _Reader, known: Collection[str], mcp_servers: Collection[str] = ()
) -> tuple[str, ...]:
    tools: list[str] = t.strings("tools", list(DEFAULT_TOOLS), "a list of tool names")
    for name in tools:
        if name.startswith("mcp:"):
            server = name.removeprefix("mcp:")
            if server not in mcp_servers and not (server == "*" and mcp_servers):
                have = ", ".join(mcp_servers) or "none"
                raise t.fail(
                    "tools",
                    f"{name!r} names no MCP server{_did_you_mean(server, mcp_servers)} "
                    f"(configured in [mcp_servers]: {have})",
                )
            continue
        if name not in known:
            raise t.fail(
                "tools",
                f"unknown tool {name!r}{_did_you_mean(name, known)} "
                f"(valid tools: {', '.join(known)})",
            )
    return tuple(tools)


# -- MCP servers ------------------------------------------------------------------------------

_MCP_STDIO_KEYS = ("command", "args", "env", "cwd")
_MCP_HTTP_KEYS = ("url", "headers", "bearer_token_env", "max_result_mb")
_MCP_KEYS = (
    *_MCP_STDIO_KEYS,
    *_MCP_HTTP_KEYS,
    "enabled_tools",
    "disabled_tools",
    "startup_timeout_s",
    "tool_timeout_s",
    "trust",
)


def _string_table(t: _Reader, key: str) -> dict[str, str]:
    strings: dict[str, str] = {}
    for name, text in t.table_of(key).items():
        if not isinstance(text, str):
            raise t.fail(f"{key}.{name}", "must be a string")
        strings[name] = text
    return strings


def parse_mcp_server(name: str, table: object) -> McpServerConfig:
    """One MCP server given other than in the config file (a client's, for one conversation:
    runtime/session_mcp.py), checked as a `[mcp_servers.NAME]` table is."""
    return _parse_mcp_server(None, name, table)


def _parse_mcp_server(path: Path | None, name: str, table: object) -> McpServerConfig:
    t = _Reader(path, f"mcp_servers.{name}", table)
    t.only(_MCP_KEYS)
    if not name or "__" in name or not all(c.isalnum() or c in "-_" for c in name):
        # The model sees `mcp__NAME__TOOL`: a name with `__` or odd characters would be ambiguous
        # or refused by providers.
        raise ConfigError(
            path, f"mcp_servers.{name}", "a server name is letters, digits, - and _ (no `__`)"
        )
    command, url = t.string("command"), t.string("url")
    if (command is None) == (url is None):
        raise t.fail("command", "set exactly one of `command` (stdio) or `url` (streamable HTTP)")
    wrong = _MCP_HTTP_KEYS if command is not None else _MCP_STDIO_KEYS
    for key in wrong:
        if key in t.table:
            transport = "`command` (stdio)" if command is not None else "`url` (HTTP)"
            raise t.fail(key, f"is not a setting of a server reached by {transport}")
    if url is not None and not url.startswith(("http://", "https://")):
        raise t.fail("url", "must start with http:// or https://")
    enabled = t.table.get("enabled_tools")
    startup = t.number("startup_timeout_s", McpServerConfig.startup_timeout_s)
    tool_timeout = t.number("tool_timeout_s", McpServerConfig.tool_timeout_s)
    for key, value in (("startup_timeout_s", startup), ("tool_timeout_s", tool_timeout)):
        if value == 0:
            raise t.fail(key, "must be above 0")
    return McpServerConfig(
        name=name,
        command=command,
        args=tuple(t.strings("args", [], "a list of strings")),
        env=_string_table(t, "env"),
        cwd=t.string("cwd"),
        url=url,
        headers=_string_table(t, "headers"),
        bearer_token_env=t.string("bearer_token_env"),
        enabled_tools=(
            None
            if enabled is None
            else tuple(t.strings("enabled_tools", [], "a list of tool names"))
        ),
        disabled_tools=tuple(t.strings("disabled_tools", [], "a list of tool names")),
        startup_timeout_s=startup,
        tool_timeout_s=tool_timeout,
        max_result_mb=t.integer("max_result_mb", McpServerConfig.max_result_mb, 1),
        trust=t.boolean("trust", False),
    )


def _parse_permissions(t: _Reader) -> Permissions:
    allow = tuple(t.strings("allow", [], "a list of command patterns"))
    for pattern in allow:
        # It could never match: an allowed command holds no control operator (docs/security.md).
        if has_control_operator(pattern):
            raise t.fail(
                "allow",
                f"{pattern!r} holds a shell control operator (; & | ` $( < > or a line break), "
                "so it would never match: allow each command on its own",
            )
    return Permissions(
        sandbox=t.choice("sandbox", SANDBOX_MODES, "workspace"),
        network=t.boolean("network", False),
        approval=t.choice("approval", APPROVAL_MODES, "escalate"),
        allow=allow,
        deny=tuple(t.strings("deny", [], "a list of command patterns")),
        limits=_parse_limits(t),
    )


def _parse_limits(t: _Reader) -> Limits:
    if "limits" not in t.table:
        return Limits()
    limits = _Reader(t.path, t.key("limits"), t.table["limits"])
    limits.only(LIMIT_KEYS)
    default = Limits()
    return Limits(
        processes=limits.integer("processes", default.processes, minimum=1),
        memory_mb=limits.integer("memory_mb", default.memory_mb, minimum=1),
        tmp_mb=limits.integer("tmp_mb", default.tmp_mb, minimum=1),
    )


# -- hooks --------------------------------------------------------------------------------------


def _parse_hooks(path: Path | None, raw: object) -> tuple[HookConfig, ...]:
    if not isinstance(raw, list):
        raise ConfigError(path, "hooks", "must be an array of tables ([[hooks]])")
    return tuple(_parse_hook(_Reader(path, f"hooks[{n}]", table)) for n, table in enumerate(raw))


def _parse_hook(t: _Reader) -> HookConfig:
    t.only(_keys(HookConfig))
    event = t.choice("event", HOOK_EVENTS, _REQUIRED)
    command = t.strings("command", _REQUIRED, "a list of strings (the program and its arguments)")
    if not command:
        raise t.fail("command", "must name a program")
    matcher = t.string("matcher")
    if matcher is not None and event not in HOOK_TOOL_EVENTS:
        raise t.fail("matcher", f"only applies to {' and '.join(HOOK_TOOL_EVENTS)} hooks")
    timeout = t.number("timeout_s", HookConfig.timeout_s)
    if timeout == 0:
        raise t.fail("timeout_s", "must be above 0")
    return HookConfig(
        event=event,
        command=tuple(command),
        matcher=matcher,
        timeout_s=timeout,
        sandbox=t.boolean("sandbox", HookConfig.sandbox),
    )


def _parse_web_fetch(t: _Reader) -> WebFetchConfig:
    t.only(_keys(WebFetchConfig))
    timeout = t.number("timeout_s", WebFetchConfig.timeout_s)
    if timeout == 0:
        raise t.fail("timeout_s", "must be above 0")
    return WebFetchConfig(
        allow_private_hosts=tuple(
            h.lower() for h in t.strings("allow_private_hosts", [], "a list of host names")
        ),
        max_mb=t.integer("max_mb", WebFetchConfig.max_mb, minimum=1),
        timeout_s=timeout,
    )
