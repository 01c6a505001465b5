"""Agents as ACP session modes; models and the permission mode as the session's config options
(the model selector, category "model"; the permission mode, category "mode", as ACP's own
example of a mode option), built from `agents/list`, `models/list` and the conversation's info.
ACP replaces the whole list with each update, so every update carries both. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp.schema import (
    ConfigOptionUpdate,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from openvaala_server.protocol import payloads

ConfigOption = SessionConfigOptionSelect | SessionConfigOptionBoolean
MODEL_OPTION = "model"
PERMISSION_OPTION = "permission_mode"
# The names and help of the permission modes (docs/security.md, "Permission modes").
PERMISSION_MODES: dict[str, tuple[str, str]] = {
    "plan": ("Plan (read-only)", "The agent reads and plans; every write is refused"),
    "ask": ("Ask every write", "Every write and every command not allowed asks first"),
    "auto-edit": ("Auto-edit", "The agent's configuration: edits in the workspace run at once"),
}


def modes(agents: Sequence[payloads.AgentInfo], current: str) -> SessionModeState:
    available = [
        SessionMode(
            id=str(agent["name"]),
            name=str(agent["name"]),
            description=str(agent.get("description") or "") or None,
        )
        for agent in agents
        if isinstance(agent, dict) and agent.get("name")
    ]
    if current and current not in {mode.id for mode in available}:  # not configured here
        available.append(SessionMode(id=current, name=current, description="not configured"))
    return SessionModeState(current_mode_id=current, available_modes=available)


def model_option(models: Sequence[payloads.ModelInfo], current: str) -> SessionConfigOptionSelect:
    options = [
        SessionConfigSelectOption(
            value=str(model["name"]),
            name=str(model["name"]),
            description=f"{model.get('provider')}: {model.get('model')}",
        )
        for model in models
        if isinstance(model, dict) and model.get("name")
    ]
    if current and current not in {option.value for option in options}:
        options.append(
            SessionConfigSelectOption(value=current, name=current, description="not configured")
        )
    return SessionConfigOptionSelect(
        type="select",
        id=MODEL_OPTION,
        name="Model",
        category="model",
        current_value=current,
        options=options,
    )


def permission_option(current: str, allowed: Sequence[str]) -> SessionConfigOptionSelect:
    """The modes the agent allows, narrowest first (the conversation's `permissionModes`)."""
    values = list(allowed) or ([current] if current else [])
    return SessionConfigOptionSelect(
        type="select",
        id=PERMISSION_OPTION,
        name="Permissions",
        description="How far the agent may act without asking: never wider than its sandbox",
        category="mode",
        current_value=current,
        options=[
            SessionConfigSelectOption(
                value=mode,
                name=PERMISSION_MODES.get(mode, (mode, ""))[0],
                description=PERMISSION_MODES.get(mode, ("", "not known here"))[1],
            )
            for mode in values
        ],
    )


def config_options(
    models: Sequence[payloads.ModelInfo], model: str, mode: str, allowed: Sequence[str]
) -> list[ConfigOption]:
    """Every config option of a session, as `session/new`, `session/load`,
    `session/set_config_option` and `config_option_update` carry them."""
    options: list[ConfigOption] = [model_option(models, model)]
    if mode:  # a daemon that announces a permission mode
        options.append(permission_option(mode, allowed))
    return options


def config_update(
    models: Sequence[payloads.ModelInfo], model: str, mode: str, allowed: Sequence[str]
) -> ConfigOptionUpdate:
    return ConfigOptionUpdate(
        session_update="config_option_update",
        config_options=config_options(models, model, mode, allowed),
    )
