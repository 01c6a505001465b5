"""The text `openvaala setup` adds to config.toml: a commented model table, and an agent using it
when the file has none (or the new model for a default agent that names none). Pure: the caller
reads and writes the file."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass

from openvaala_server.domain import catalog
from openvaala_server.protocol import codec
from openvaala_server.setup.presets import Preset

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class NewModel:
    name: str  # the table name, `[models.<name>]`
    preset: Preset
    model: str  # the provider's model id
    base_url: str | None  # None: the provider's official address
    api_key_env: str | None = None
    api_key_file: str | None = None  # relative to the config file's directory
    context_window: int | None = None  # only for a hosted model the catalog lacks


def string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return codec.text(value, ascii=True)


def key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else string(name)


def table_name(model: str, taken: set[str]) -> str:
    """A table name for `model` ("qwen2.5-coder:14b" → "qwen2-5-coder-14b") not in `taken`."""
    base = re.sub(r"[^a-z0-9_-]+", "-", model.lower()).strip("-") or "model"
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


def existing(text: str) -> tuple[set[str], set[str]]:
    """(model names, agent names) of a config file's text; it must parse as TOML."""
    raw = tomllib.loads(text)
    models, agents = raw.get("models"), raw.get("agents")
    return (
        set(models) if isinstance(models, dict) else set(),
        set(agents) if isinstance(agents, dict) else set(),
    )


def model_table(new: NewModel, when: str) -> str:
    preset = new.preset
    lines = [
        f"# Added by `openvaala setup` on {when}: {preset.title}.",
        f"[models.{key(new.name)}]",
        f"provider = {string(preset.provider)}",
        f"model = {string(new.model)}",
    ]
    official = (preset.base_url or "").rstrip("/")
    if new.base_url and (preset.key == "ollama" or new.base_url.rstrip("/") != official):
        lines.append(f"base_url = {string(new.base_url)}")
    if new.api_key_env:
        lines.append(
            f"api_key_env = {string(new.api_key_env)}"
            "  # the key is read from this variable of the daemon's environment"
        )
    if new.api_key_file:
        lines.append(
            f"api_key_file = {string(new.api_key_file)}  # written by setup, readable by you only"
        )
    if preset.key == "ollama":
        lines.append("ollama = true  # ask Ollama for the whole window with every request")
    if catalog.known_model(preset.provider, new.model) is not None:
        lines.append(
            "# context_window, max_output_tokens and vision come from the catalog of well-known"
            " models; set them here to override."
        )
    elif new.context_window is not None:
        lines.append(f"context_window = {new.context_window}")
    else:
        lines.append(
            "# context_window is asked of the server when the daemon starts; set it here to"
            " override."
        )
    return "\n".join(lines) + "\n"


def agent_table(model_name: str) -> str:
    return (
        "\n".join(
            [
                "# The agent new conversations use (added by `openvaala setup`).",
                "[agents.default]",
                'description = "A general assistant that can run commands and edit files"',
                f"model = {string(model_name)}",
            ]
        )
        + "\n"
    )


def extended(text: str, new: NewModel, when: str) -> str:
    """`text` (the file as it is, maybe empty) with the new model, and an agent on it if the file
    defines none. What was there is kept byte for byte."""
    _, agents = existing(text)
    parts = [text.rstrip("\n")] if text.strip() else []
    parts.append(model_table(new, when))
    if not agents:
        parts.append(agent_table(new.name))
    return "\n\n".join(part.rstrip("\n") for part in parts) + "\n"


def modelless_default_agent(text: str) -> str | None:
    """The name of the file's default agent if it names no model (so new conversations would
    stay on the demo model); None when the file has no agents or its default names one."""
    raw = tomllib.loads(text)
    agents = raw.get("agents")
    if not isinstance(agents, dict) or not agents:
        return None
    default = raw.get("default_agent", next(iter(agents)))
    table = agents.get(default) if isinstance(default, str) else None
    if not isinstance(table, dict) or "model" in table:
        return None
    return str(default)


def with_agent_model(text: str, agent: str, model_name: str) -> str | None:
    """`text` with `model = "<model_name>"` as the first key of `[agents.<agent>]`; None when the
    table is not written as such a header (dotted keys, an inline table), which setup then
    reports instead of editing. Every other byte is kept."""
    header = re.compile(
        r"^[ \t]*\[[ \t]*agents[ \t]*\.[ \t]*(?:"
        + re.escape(agent)
        + "|"
        + re.escape(string(agent))
        + "|'"
        + re.escape(agent)
        + r"')[ \t]*\][ \t]*(?:#[^\n]*)?$",
        re.MULTILINE,
    )
    found = header.search(text)
    if found is None:
        return None
    line = f"\nmodel = {string(model_name)}  # added by `openvaala setup`"
    edited = text[: found.end()] + line + text[found.end() :]
    try:  # the edit is checked, not trusted: the result must say what was meant
        agents = tomllib.loads(edited).get("agents", {})
    except tomllib.TOMLDecodeError:
        return None
    return edited if agents.get(agent, {}).get("model") == model_name else None
