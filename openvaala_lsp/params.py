"""Reading the params of custom requests and the arguments of `workspace/executeCommand`.

pygls hands custom params over as nested namedtuples (or lists of them); everything here turns
them back into plain JSON values and checks the keys the bridge needs."""

from __future__ import annotations

from typing import cast

from pygls.exceptions import JsonRpcInvalidParams

from openvaala_server.protocol import payloads
from openvaala_server.protocol.json_types import JsonValue

Params = dict[str, JsonValue]


def plain(value: object) -> JsonValue:
    """A pygls params object (namedtuple-like, possibly nested) as plain JSON values."""
    if hasattr(value, "_asdict"):
        fields: dict[str, object] = value._asdict()
        return {k: plain(v) for k, v in fields.items()}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    # What is left is a scalar as pygls decoded it from the JSON message.
    return cast("JsonValue", value)


def as_params(value: object) -> Params:
    decoded = plain(value)
    if decoded is None:
        return {}
    if not isinstance(decoded, dict):
        raise JsonRpcInvalidParams("params must be an object")
    return {k: v for k, v in decoded.items() if v is not None}


def required(params: Params, key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str) or not value:
        raise JsonRpcInvalidParams(f"missing or invalid '{key}'", data={"param": key})
    return value


def optional(params: Params, key: str) -> str | None:
    value = params.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise JsonRpcInvalidParams(f"'{key}' must be a string", data={"param": key})
    return value


def session_params(params: Params) -> payloads.SessionParams:
    """`{conversationId, sessionId?}` for the daemon (no sessionId: the root agent)."""
    out: payloads.SessionParams = {"conversationId": required(params, "conversationId")}
    if (sid := optional(params, "sessionId")) is not None:
        out["sessionId"] = sid
    return out


def from_arguments(arguments: list[object], names: tuple[str, ...]) -> Params:
    """Command arguments, either one object (`[{"conversationId": ...}]`) or positional values in
    the order of `names` (`["<conversationId>", "text"]`)."""
    args = [plain(a) for a in arguments]
    if len(args) == 1 and isinstance(args[0], dict):
        return as_params(args[0])
    if len(args) > len(names):
        raise JsonRpcInvalidParams(f"expected at most {len(names)} arguments ({', '.join(names)})")
    return {name: value for name, value in zip(names, args, strict=False) if value is not None}
