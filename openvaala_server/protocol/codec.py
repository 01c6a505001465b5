"""The one place that turns wire frames into Python values and back (orjson)."""

from __future__ import annotations

import json
from typing import NoReturn, cast

import orjson

from openvaala_server.protocol.json_types import JsonValue


class DecodeError(ValueError):
    """A frame that is not JSON the daemon can use. `value` is what the lenient standard
    parser read of a frame orjson refuses only for its values (a lone surrogate escape such as
    ``"\\ud800"``), so a caller can still answer the message's id."""

    def __init__(self, message: str, value: JsonValue = None) -> None:
        super().__init__(message)
        self.value = value


def dumps(value: object) -> bytes:
    return orjson.dumps(value)


def loads(data: str | bytes) -> JsonValue:
    try:
        return cast(JsonValue, orjson.loads(data))  # JSON text decodes to JSON values
    except orjson.JSONDecodeError as exc:
        error = str(exc)
    # orjson refuses a lone surrogate escape; the standard parser reads it, so the frame's
    # shape (and its id) is known though its values cannot be used.
    try:
        value = cast(JsonValue, json.loads(data, parse_constant=_no_constant))
    except (ValueError, RecursionError):
        raise DecodeError(error) from None
    raise DecodeError(error, value)


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")
