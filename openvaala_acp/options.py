"""Agents as ACP session modes and models as the session's model selector (a config option of
category "model"), built from `agents/list` and `models/list`. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp.schema import (
    ConfigOptionUpdate,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from openvaala_server.protocol import payloads

MODEL_OPTION = "model"


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


def model_update(models: Sequence[payloads.ModelInfo], current: str) -> ConfigOptionUpdate:
    return ConfigOptionUpdate(
        session_update="config_option_update", config_options=[model_option(models, current)]
    )
