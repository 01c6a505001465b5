"""Loading `config.toml`: agents, models, retry and server settings.

`$OPENVAALA_CONFIG`, else `$XDG_CONFIG_HOME/openvaala/config.toml`, else
`~/.config/openvaala/config.toml`. No file means one agent `default` on the offline `demo` model.
Every problem is a `ConfigError` naming the file, the key and what is wrong — never a traceback.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openvaala_server.domain.permissions import (
    APPROVAL_MODES,
    SANDBOX_MODES,
    Permissions,
)

PROVIDERS = ("openai", "openai_responses", "anthropic", "demo")
DEFAULT_TOOLS = ("shell", "read_file", "write_file", "edit_file", "list_dir", "spawn_agent")
DEFAULT_PORT = 7450


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
    # Provider-specific settings (e.g. `pace_ms` for demo, `num_ctx` for Ollama, `headers`).
    options: dict[str, Any] = field(default_factory=dict)


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


@dataclass(frozen=True)
class RetryConfig:
    max_attempts: int = 10
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0


@dataclass(frozen=True)
class ServerConfig:
    port: int = DEFAULT_PORT
    max_frame_bytes: int = 1024 * 1024
    tool_output_limit: int = 20_000
    client_queue_limit: int = 1000  # events waiting for one slow client before it is dropped
    replay_events: int = 10_000  # events kept per conversation for `afterSeq` resumption
    loaded_conversations: int = 64  # kept in memory while nobody watches them


@dataclass(frozen=True)
class SubagentConfig:
    max_depth: int = 3
    max_concurrent: int = 8
    wait_timeout_s: float = 600.0


@dataclass(frozen=True)
class Config:
    default_agent: str
    models: dict[str, ModelConfig]
    agents: dict[str, AgentConfig]
    retry: RetryConfig = RetryConfig()
    server: ServerConfig = ServerConfig()
    subagents: SubagentConfig = SubagentConfig()
    path: Path | None = None


DEMO_MODEL = ModelConfig(
    name="demo",
    provider="demo",
    model="demo",
    context_window=32_000,
    max_output_tokens=4_000,
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


def config_path() -> Path:
    explicit = os.environ.get("OPENVAALA_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "openvaala" / "config.toml"


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


class _Reader:
    """Typed access to one TOML table, raising `ConfigError` with the full key path."""

    def __init__(self, path: Path | None, prefix: str, table: object) -> None:
        if not isinstance(table, dict):
            raise ConfigError(path, prefix, "must be a table")
        self.path, self.prefix, self.table = path, prefix, table

    def _key(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def _get(self, key: str, kinds: tuple[type, ...], kind_name: str, default: Any) -> Any:
        if key not in self.table:
            if default is _REQUIRED:
                raise ConfigError(self.path, self._key(key), "is required")
            return default
        value = self.table[key]
        if isinstance(value, bool) and bool not in kinds:
            raise ConfigError(self.path, self._key(key), f"must be {kind_name}")
        if not isinstance(value, kinds):
            raise ConfigError(self.path, self._key(key), f"must be {kind_name}")
        return value

    def string(self, key: str, default: Any = None) -> Any:
        return self._get(key, (str,), "a string", default)

    def integer(self, key: str, default: Any = None, minimum: int = 0) -> Any:
        value = self._get(key, (int,), "a whole number", default)
        if isinstance(value, int) and value < minimum:
            raise ConfigError(self.path, self._key(key), f"must be at least {minimum}")
        return value

    def number(self, key: str, default: Any = None) -> Any:
        value = self._get(key, (int, float), "a number", default)
        if isinstance(value, int | float) and value < 0:
            raise ConfigError(self.path, self._key(key), "must not be negative")
        return float(value) if value is not None else None

    def table_of(self, key: str) -> dict[str, Any]:
        value = self._get(key, (dict,), "a table", {})
        return dict(value)


_REQUIRED = object()


def parse_config(raw: dict[str, Any], path: Path | None = None) -> Config:
    top = _Reader(path, "", raw)
    models: dict[str, ModelConfig] = {"demo": DEMO_MODEL}
    for name, table in top.table_of("models").items():
        models[name] = _parse_model(path, name, table)
    agents: dict[str, AgentConfig] = {}
    for name, table in top.table_of("agents").items():
        agents[name] = _parse_agent(path, name, table, models)
    if not agents:
        agents["default"] = DEFAULT_AGENT
    default_agent = top.string("default_agent", next(iter(agents)))
    if default_agent not in agents:
        raise ConfigError(path, "default_agent", f"names no agent (have: {', '.join(agents)})")

    server_t = _Reader(path, "server", top.table_of("server"))
    server = ServerConfig(
        port=server_t.integer("port", DEFAULT_PORT),
        max_frame_bytes=server_t.integer(
            "max_frame_bytes", ServerConfig.max_frame_bytes, minimum=1024
        ),
        tool_output_limit=server_t.integer(
            "tool_output_limit", ServerConfig.tool_output_limit, 100
        ),
        client_queue_limit=server_t.integer(
            "client_queue_limit", ServerConfig.client_queue_limit, 1
        ),
        replay_events=server_t.integer("replay_events", ServerConfig.replay_events, 0),
        loaded_conversations=server_t.integer(
            "loaded_conversations", ServerConfig.loaded_conversations, 1
        ),
    )
    if server.port > 65535:
        raise ConfigError(path, "server.port", "must be at most 65535")
    retry_t = _Reader(path, "retry", top.table_of("retry"))
    retry = RetryConfig(
        max_attempts=retry_t.integer("max_attempts", RetryConfig.max_attempts, minimum=1),
        base_delay_s=retry_t.number("base_delay_s", RetryConfig.base_delay_s),
        max_delay_s=retry_t.number("max_delay_s", RetryConfig.max_delay_s),
    )
    sub_t = _Reader(path, "subagents", top.table_of("subagents"))
    subagents = SubagentConfig(
        max_depth=sub_t.integer("max_depth", SubagentConfig.max_depth),
        max_concurrent=sub_t.integer("max_concurrent", SubagentConfig.max_concurrent, minimum=1),
        wait_timeout_s=sub_t.number("wait_timeout_s", SubagentConfig.wait_timeout_s),
    )
    return Config(
        default_agent=default_agent,
        models=models,
        agents=agents,
        retry=retry,
        server=server,
        subagents=subagents,
        path=path,
    )


_MODEL_KEYS = {
    "provider",
    "model",
    "base_url",
    "api_key_env",
    "context_window",
    "max_output_tokens",
    "reasoning_context",
}


def _parse_model(path: Path | None, name: str, table: object) -> ModelConfig:
    t = _Reader(path, f"models.{name}", table)
    provider = t.string("provider", _REQUIRED)
    if provider not in PROVIDERS:
        raise ConfigError(
            path,
            f"models.{name}.provider",
            f"unknown provider {provider!r} (one of {', '.join(PROVIDERS)})",
        )
    if provider == "demo":
        window = t.integer("context_window", DEMO_MODEL.context_window, minimum=1)
        max_out = t.integer("max_output_tokens", DEMO_MODEL.max_output_tokens, minimum=1)
    else:
        window = t.integer("context_window", _REQUIRED, minimum=1)
        max_out = t.integer("max_output_tokens", 4096, minimum=1)
    if max_out >= window:
        raise ConfigError(path, f"models.{name}.max_output_tokens", "must be below context_window")
    reasoning_context = t.string("reasoning_context")
    if reasoning_context not in (None, "all_turns", "current_turn"):
        raise ConfigError(
            path, f"models.{name}.reasoning_context", "must be all_turns or current_turn"
        )
    options = {k: v for k, v in t.table.items() if k not in _MODEL_KEYS}
    return ModelConfig(
        name=name,
        provider=provider,
        model=t.string("model", name),
        context_window=window,
        max_output_tokens=max_out,
        base_url=t.string("base_url"),
        api_key_env=t.string("api_key_env"),
        reasoning_context=reasoning_context,
        options=options,
    )


def _parse_agent(
    path: Path | None, name: str, table: object, models: dict[str, ModelConfig]
) -> AgentConfig:
    t = _Reader(path, f"agents.{name}", table)
    model_set = "model" in t.table
    model = t.string("model", "demo")
    if model not in models:
        raise ConfigError(
            path, f"agents.{name}.model", f"names no model (have: {', '.join(models)})"
        )
    compact_model = t.string("compact_model")
    if compact_model is not None:
        if compact_model not in models:
            raise ConfigError(
                path, f"agents.{name}.compact_model", f"names no model (have: {', '.join(models)})"
            )
        if models[compact_model].context_window < models[model].context_window:
            raise ConfigError(
                path,
                f"agents.{name}.compact_model",
                "its context_window must be at least as large as the agent's model's",
            )
    tools = t._get("tools", (list,), "a list of tool names", list(DEFAULT_TOOLS))
    if not all(isinstance(x, str) for x in tools):
        raise ConfigError(path, f"agents.{name}.tools", "must be a list of tool names")
    return AgentConfig(
        name=name,
        permissions=_parse_permissions(t),
        description=t.string("description", ""),
        model=model,
        compact_model=compact_model,
        instructions=t.string("instructions", ""),
        tools=tuple(tools),
        model_set=model_set,
    )


def _parse_permissions(t: _Reader) -> Permissions:
    sandbox = t.string("sandbox", "workspace")
    if sandbox not in SANDBOX_MODES:
        raise ConfigError(t.path, t._key("sandbox"), f"must be one of {', '.join(SANDBOX_MODES)}")
    approval = t.string("approval", "escalate")
    if approval not in APPROVAL_MODES:
        raise ConfigError(t.path, t._key("approval"), f"must be one of {', '.join(APPROVAL_MODES)}")
    network = t._get("network", (bool,), "true or false", False)
    patterns = {}
    for key in ("allow", "deny"):
        value = t._get(key, (list,), "a list of command patterns", [])
        if not all(isinstance(x, str) and x.strip() for x in value):
            raise ConfigError(t.path, t._key(key), "must be a list of command patterns")
        patterns[key] = tuple(value)
    return Permissions(
        sandbox=sandbox,
        network=network,
        approval=approval,
        allow=patterns["allow"],
        deny=patterns["deny"],
    )
