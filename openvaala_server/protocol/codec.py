"""The one place that turns wire frames into Python values and back (orjson)."""

from __future__ import annotations

from typing import Any

import orjson


class DecodeError(ValueError):
    pass


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)


def dumps_text(value: Any) -> str:
    return orjson.dumps(value).decode()


def loads(data: str | bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise DecodeError(str(exc)) from None
