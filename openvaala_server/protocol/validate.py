"""A request's params checked against its method's TypedDict (payloads.REQUEST_PARAMS), once, at
the server's edge (api/handlers.py `Dispatcher.dispatch`), by msgspec: a missing required key, a
value of the wrong type (nested shapes included) or a value outside its `Literal` is an
`InvalidParams` naming the param and the path to the value (docs/protocol.md, "Errors").

What a TypedDict cannot say stays with the handler's getters (protocol/params.py): lengths,
ranges, the id pattern (a malformed id is `not_found`), and rules across params. Keys a method
does not declare are ignored, as before, and `null` counts as absent (docs/protocol.md).

A shape that holds itself (`TreeNode`'s `children`) would have no end as a msgspec type built
ahead: inside another shape it is taken as any JSON, and the values found there are then
checked against it one by one, so the check ends where the value does.
"""

from __future__ import annotations

import functools
import re
import types
import typing
from collections.abc import Iterator
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
    _convert(shape, present, "")


def _convert(shape: type, value: object, at: str) -> None:
    """Check `value` (found at `at`, msgspec's path: `.children[0]`) against `shape`."""
    _msgspec(value, _checkable(shape), shape, at)
    if isinstance(value, dict):
        for key, hint in _deferred_fields(shape):
            if key in value:
                _deferred(hint, value[key], f"{at}.{key}")


def _deferred(hint: Any, value: object, at: str) -> None:
    """Check what msgspec took as any JSON inside `value` (of type `hint`, already checked as
    far as msgspec's type goes): each value of a shape that holds itself."""
    if typing.is_typeddict(hint):
        if _recursive(hint):
            _convert(hint, value, at)
        elif isinstance(value, dict):
            for key, inner in _deferred_fields(hint):
                if key in value:
                    _deferred(inner, value[key], f"{at}.{key}")
        return
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is list and isinstance(value, list):
        for i, item in enumerate(value):
            _deferred(args[0], item, f"{at}[{i}]")
    elif origin is dict and isinstance(value, dict):
        for item in value.values():
            _deferred(args[1], item, f"{at}[...]")
    elif origin in (Union, types.UnionType):
        # msgspec allows one object type in a union: an object is that arm's, anything else
        # the other arms' (which a self-holding arm, any JSON to msgspec, let through).
        shapes = [a for a in args if typing.is_typeddict(a)]
        others = [a for a in args if not typing.is_typeddict(a)]
        if isinstance(value, dict) and shapes:
            _deferred(shapes[0], value, at)
            return
        if any(_recursive(a) for a in shapes):
            either = (*(_wire(a) for a in others), dict[str, Any])  # "an object or …"
            _msgspec(value, Union[either], object, at)  # noqa: UP007
        for arg in others:
            _deferred(arg, value, at)


def _msgspec(value: object, wire: Any, shape: type, at: str) -> None:
    try:
        msgspec.convert(value, wire)
    except msgspec.ValidationError as exc:
        raise _invalid(str(exc), shape, at) from None


def _invalid(text: str, shape: type, at: str = "") -> InvalidParams:
    found = _AT.search(text)
    inner = found["path"] if found else ""
    path = (at + inner).removeprefix(".")
    problem = text[: found.start()] if found else text
    missing = _MISSING.fullmatch(problem)
    if missing:
        path = f"{path}.{missing['field']}" if path else missing["field"]
        return InvalidParams(f'"{path}" is required', param=_top(path))
    expected = _EXPECTED.fullmatch(problem)
    if expected:
        want = " or ".join(_WORDS.get(w, w) for w in expected["want"].split(" | "))
        return InvalidParams(f'"{path}" must be {want}', param=_top(path))
    key = inner.removeprefix(".")
    if problem.startswith("Invalid enum value") and key in _hints(shape):
        options = ", ".join(str(o) for o in _literal_options(_hints(shape)[key]))
        return InvalidParams(f'"{path}" must be one of {options}', param=_top(path))
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
        return Any if _recursive(hint) else _checkable(hint)  # the former: _deferred checks it
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        return Union[tuple(_wire(a) for a in args)]  # noqa: UP007
    if origin is list:
        return list[_wire(args[0])]  # type: ignore[misc]
    if origin is dict:
        return dict[str, _wire(args[1])]  # type: ignore[misc]  # JSON keys are strings
    return hint


def _shapes_in(hint: Any) -> Iterator[type]:
    """The TypedDicts a type names, at any depth of lists, maps and unions."""
    if isinstance(hint, ForwardRef | str):
        return
    if typing.is_typeddict(hint):
        yield hint
        return
    for arg in typing.get_args(hint):
        yield from _shapes_in(arg)


@functools.cache
def _reachable(shape: type) -> frozenset[type]:
    """Every TypedDict inside `shape`'s values, at any depth (`shape` too when it holds itself)."""
    seen: set[type] = set()
    todo = [inner for hint in _hints(shape).values() for inner in _shapes_in(hint)]
    while todo:
        inner = todo.pop()
        if inner not in seen:
            seen.add(inner)
            todo.extend(s for hint in _hints(inner).values() for s in _shapes_in(hint))
    return frozenset(seen)


@functools.cache
def _recursive(shape: type) -> bool:
    return shape in _reachable(shape)


@functools.cache
def _deferred_fields(shape: type) -> tuple[tuple[str, Any], ...]:
    """`shape`'s fields whose values hold a shape that holds itself: what _deferred walks."""

    return tuple(
        (key, hint)
        for key, hint in _hints(shape).items()
        if any(_holds_recursive(inner) for inner in _shapes_in(hint))
    )


@functools.cache
def _holds_recursive(shape: type) -> bool:
    return any(_recursive(s) for s in _reachable(shape))
