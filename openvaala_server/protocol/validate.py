"""A request's params checked against its method's TypedDict (payloads.REQUEST_PARAMS), once, at
the server's edge (api/handlers.py `Dispatcher.dispatch`), by msgspec: a missing required key, a
value of the wrong type (nested shapes included) or a value outside its `Literal` is an
`InvalidParams` naming the param and the path to the value (docs/protocol.md, "Errors").

What a TypedDict cannot say stays with the handler's getters (protocol/params.py): lengths,
ranges, the id pattern (a malformed id is `not_found`), and rules across params. Keys a method
does not declare are ignored, as before, and `null` counts as absent (docs/protocol.md).
"""

from __future__ import annotations

import functools
import re
import types
import typing
from typing import Any, Final, ForwardRef, Literal, NotRequired, TypedDict, Union

import msgspec

from openvaala_server.errors import InvalidParams
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.protocol.typed_keys import optional_keys

# How a message names a JSON type msgspec reports (`Expected `str`, got `int``).
_WORDS: Final = {
    "str": "a string",
    "bool": "true or false",
    "int": "a whole number",
    "float": "a number",
    "object": "an object",
    "array": "a list",
    "null": "null",
}
_EXPECTED: Final = re.compile(r"Expected `(?P<want>[^`]+)`, got `(?P<got>[^`]+)`")
_MISSING: Final = re.compile(r"Object missing required field `(?P<field>[^`]+)`")
_AT: Final = re.compile(r" - at `\$(?P<path>[^`]*)`$")


def check(shape: type, raw: JsonObject, *, null_is_absent: bool = True) -> None:
    """Raise `InvalidParams` when `raw` is not a `shape` (a TypedDict of payloads.py). A param
    that is `null` counts as absent; with `null_is_absent=False` (a result or a notification the
    daemon sends, whose `X | None` fields are there with null) it is a value like any other."""
    present = {k: v for k, v in raw.items() if v is not None or not null_is_absent}
    try:
        msgspec.convert(present, _checkable(shape))
    except msgspec.ValidationError as exc:
        raise _invalid(str(exc), shape) from None


def _invalid(text: str, shape: type) -> InvalidParams:
    at = _AT.search(text)
    path = at["path"].removeprefix(".") if at else ""
    problem = text[: at.start()] if at else text
    missing = _MISSING.fullmatch(problem)
    if missing:
        path = f"{path}.{missing['field']}" if path else missing["field"]
        return InvalidParams(f'"{path}" is required', param=_top(path))
    expected = _EXPECTED.fullmatch(problem)
    if expected:
        want = " or ".join(_WORDS.get(w, w) for w in expected["want"].split(" | "))
        return InvalidParams(f'"{path}" must be {want}', param=_top(path))
    if problem.startswith("Invalid enum value") and path in _hints(shape):
        options = ", ".join(str(o) for o in _literal_options(_hints(shape)[path]))
        return InvalidParams(f'"{path}" must be one of {options}', param=path)
    return InvalidParams(f'"{path}": {problem[:1].lower()}{problem[1:]}', param=_top(path))


def _top(path: str) -> str:
    """The request's own param a path is in (`images[0].data` is in `images`)."""
    return re.split(r"[.\[]", path, maxsplit=1)[0]


def _literal_options(hint: object) -> list[object]:
    if typing.get_origin(hint) is Literal:
        return list(typing.get_args(hint))
    return [o for arg in typing.get_args(hint) for o in _literal_options(arg)]


@functools.cache
def _hints(shape: type) -> dict[str, Any]:
    return typing.get_type_hints(shape)


@functools.cache
def _checkable(shape: type) -> Any:
    """`shape` as msgspec reads it: the same keys, required or not, and types, but where a value
    is free JSON (`JsonValue`, whose recursive alias msgspec cannot follow), any JSON."""
    hints = typing.get_type_hints(shape, include_extras=True)
    optional_ones = optional_keys(shape)  # not `__optional_keys__`: wrong on 3.11 (typed_keys.py)
    fields: dict[str, Any] = {}
    for key, hint in hints.items():
        optional = key in optional_ones
        inner = typing.get_args(hint)[0] if typing.get_origin(hint) in _QUALIFIERS else hint
        fields[key] = NotRequired[_wire(inner)] if optional else _wire(inner)
    return TypedDict(shape.__name__, fields)  # type: ignore[operator]


_QUALIFIERS: Final = (NotRequired, typing.Required)


def _wire(hint: Any) -> Any:
    if isinstance(hint, ForwardRef | str):
        return Any  # the inside of `JsonValue`
    if typing.is_typeddict(hint):
        return _checkable(hint)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        return Union[tuple(_wire(a) for a in args)]  # noqa: UP007
    if origin is list:
        return list[_wire(args[0])]  # type: ignore[misc]
    if origin is dict:
        return dict[str, _wire(args[1])]  # type: ignore[misc]  # JSON keys are strings
    return hint
