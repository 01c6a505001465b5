"""The one JSON codec of the daemon and its command-line tools: every module reads and writes
JSON through these functions, with the options named here (an import contract in
pyproject.toml keeps it so; docs/design.md "One JSON codec").

- Wire frames, journal lines, index rows: `dumps` / `loads` / `parse` (orjson: compact, UTF-8
  bytes, fast).
- Text a person or a model reads (tool arguments and results, hook input, `--json` listings):
  `text`, the standard library's spacing with non-ASCII kept as is, and `parse_text`, which
  also reads what a strict parser refuses (NaN) from other programs' answers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NoReturn, cast

import orjson

from openvaala_server.protocol.json_types import JsonValue

# A pre-encoded JSON value, put into an encoded document as it is (stored summaries).
Fragment = orjson.Fragment
# What `parse` raises for text that is not JSON (a ValueError).
JSONDecodeError = orjson.JSONDecodeError
# What `dumps` raises for a value it cannot encode (a lone surrogate, a non-JSON type).
JSONEncodeError = orjson.JSONEncodeError


class DecodeError(ValueError):
    """A frame that is not JSON the daemon can use. `value` is what the lenient standard
    parser read of a frame orjson refuses only for its values (a lone surrogate escape such as
    ``"\\ud800"``), so a caller can still answer the message's id."""

    def __init__(self, message: str, value: JsonValue = None) -> None:
        super().__init__(message)
        self.value = value


def dumps(value: object, *, sort_keys: bool = False, indent: bool = False) -> bytes:
    """Compact UTF-8 JSON (`indent`: two spaces, for a file a person may open)."""
    option = (orjson.OPT_SORT_KEYS if sort_keys else 0) | (orjson.OPT_INDENT_2 if indent else 0)
    return orjson.dumps(value, option=option or None)


# Strict: `JSONDecodeError` for anything that is not JSON (a damaged line on disk). orjson's own
# function, not a wrapper: a journal read calls it once per line.
parse: Callable[[str | bytes | bytearray | memoryview], Any] = orjson.loads


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


def text(
    value: object,
    *,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
    ascii: bool = False,
) -> str:
    """JSON text as people and models read it: the standard spacing, non-ASCII as it is
    (`ascii`: escaped, for a file or a terminal that may not be UTF-8)."""
    return json.dumps(
        value, ensure_ascii=ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def parse_text(data: str | bytes) -> Any:
    """Lenient: what other programs write (a provider's answer, a file a person edited);
    `ValueError` when it is not JSON."""
    return json.loads(data)


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")
