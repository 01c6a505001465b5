"""What the user reads when a request fails: what happened and what to do, in their words.

The protocol's method names ("conversation/list") mean nothing to a user and never reach the
screen: a message that carries one (the client's "connection lost during …") is reworded.
"""

from __future__ import annotations

from openvaala_server.client import ConnectionLost, RpcError
from openvaala_server.protocol.display import METHOD as METHOD  # tests look names up here
from openvaala_server.protocol.display import scrub

START_DAEMON = "openvaala serve start"
LOST = (
    f"The connection to the daemon was lost; reconnecting… If it stopped, start it: {START_DAEMON}"
)
TIMEOUT = f"The daemon did not answer in time. If it stopped, start it: {START_DAEMON}"

FRIENDLY = {
    "model_missing": "The model of this conversation is not configured: pick one with /model.",
    "not_idle": "Not now: something is still running or waiting. Interrupt it (Esc) first.",
    "turn_running": "A turn is running: interrupt it (Esc) first.",
    "input_consumed": "That input was already taken into the turn (or withdrawn).",
}


def agent_missing(agent: str, available: list[str]) -> str:
    """What to do when `agent` is not configured here (docs/protocol.md, `agent_missing`)."""
    others = ", ".join(available) if available else "none configured"
    return (
        f"The agent {agent!r} is not configured here: choose another with /agent NAME "
        f"(available: {others})."
    )


def cwd_missing(cwd: str) -> str:
    """What to do when the directory `cwd` does not exist (docs/protocol.md, `cwd_missing`)."""
    where = f"The directory {cwd}" if cwd else "The working directory"
    return (
        f"{where} does not exist: point this conversation elsewhere with /cwd PATH, or recreate it."
    )


def describe(exc: BaseException) -> str:
    """The sentence a user reads for `exc`."""
    if isinstance(exc, ConnectionLost):
        return LOST
    if isinstance(exc, TimeoutError):
        return TIMEOUT
    if isinstance(exc, RpcError):
        # These two carry what the daemon's message says in data, and its message names the
        # protocol method to call: the slash command is said instead.
        if exc.kind == "agent_missing":
            available = exc.data.get("available")
            names = [str(a) for a in available] if isinstance(available, list) else []
            return agent_missing(str(exc.data.get("agent") or "?"), names)
        if exc.kind == "cwd_missing":
            return cwd_missing(str(exc.data.get("cwd") or ""))
        friendly = FRIENDLY.get(exc.kind)
        message = scrub(exc.message)
        return f"{friendly} ({message})" if friendly else message
    return scrub(str(exc)) or type(exc).__name__
