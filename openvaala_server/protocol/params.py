"""Typed reading of request params, after the dispatcher checked them against their method's
TypedDict (protocol/validate.py: a missing key, a wrong type or a value outside its literals is an
`InvalidParams` naming the key). The getters add what a TypedDict cannot say: lengths, ranges,
defaults, and the id pattern (a malformed id is `not_found`, checked before anything sees it).

Each getter without a default returns its type or raises; with a default it returns its type or
that default (`p.string("agent", None)` is `str | None`)."""

from __future__ import annotations

from enum import Enum
from typing import Final, TypeVar, cast, overload

from openvaala_server.domain.ids import is_valid_id
from openvaala_server.errors import InvalidParams, NotFound
from openvaala_server.protocol.json_types import JsonObject, JsonValue

T = TypeVar("T")
S = TypeVar("S", bound=str)


class _Missing(Enum):
    """No default: the param is required."""

    MISSING = "missing"


_MISSING: Final = _Missing.MISSING


class Params:
    def __init__(self, raw: JsonObject) -> None:
        self.raw = raw

    def _get(self, key: str, required: bool) -> JsonValue:
        """The value, or None when absent (a `null` counts as absent, docs/protocol.md)."""
        value = self.raw.get(key)
        if value is None and required:
            raise InvalidParams(f'"{key}" is required', param=key)
        return value

    def value(self, key: str) -> JsonValue:
        """A param of no declared type (e.g. `images`, read by its own parser), None if absent."""
        return self.raw.get(key)

    @overload
    def string(self, key: str, *, max_len: int = ...) -> str: ...
    @overload
    def string(self, key: str, default: T, *, max_len: int = ...) -> str | T: ...
    def string(
        self, key: str, default: T | _Missing = _MISSING, *, max_len: int = 1_000_000
    ) -> str | T:
        value = self._get(key, default is _MISSING)
        if value is None:
            assert not isinstance(default, _Missing)
            return default
        value = cast(str, value)  # checked at the edge (protocol/validate.py)
        if len(value) > max_len:
            raise InvalidParams(f'"{key}" is longer than {max_len} characters', param=key)
        return value

    @overload
    def boolean(self, key: str) -> bool: ...
    @overload
    def boolean(self, key: str, default: T) -> bool | T: ...
    def boolean(self, key: str, default: T | _Missing = _MISSING) -> bool | T:
        value = self._get(key, default is _MISSING)
        if value is None:
            assert not isinstance(default, _Missing)
            return default
        return cast(bool, value)  # checked at the edge

    @overload
    def integer(self, key: str, *, minimum: int = ..., maximum: int = ...) -> int: ...
    @overload
    def integer(
        self, key: str, default: T, *, minimum: int = ..., maximum: int = ...
    ) -> int | T: ...
    def integer(
        self,
        key: str,
        default: T | _Missing = _MISSING,
        *,
        minimum: int = 0,
        maximum: int = 2**53,
    ) -> int | T:
        value = self._get(key, default is _MISSING)
        if value is None:
            assert not isinstance(default, _Missing)
            return default
        value = cast(int, value)  # checked at the edge
        if not minimum <= value <= maximum:
            raise InvalidParams(f'"{key}" must be between {minimum} and {maximum}', param=key)
        return value

    @overload
    def choice(self, key: str, options: tuple[S, ...]) -> S: ...
    @overload
    def choice(self, key: str, options: tuple[S, ...], default: T) -> S | T: ...
    def choice(self, key: str, options: tuple[S, ...], default: T | _Missing = _MISSING) -> S | T:
        value = self.string(key) if default is _MISSING else self.string(key, None)
        if value is None:
            assert not isinstance(default, _Missing)
            return default
        for option in options:
            if value == option:
                return option
        raise InvalidParams(f'"{key}" must be one of {", ".join(options)}', param=key)

    @overload
    def id(self, key: str) -> str: ...
    @overload
    def id(self, key: str, default: T) -> str | T: ...
    def id(self, key: str, default: T | _Missing = _MISSING) -> str | T:
        """An id param. A malformed id cannot name anything, so it is `not_found`, not a path."""
        value = self._get(key, default is _MISSING)
        if value is None:
            assert not isinstance(default, _Missing)
            return default
        if not isinstance(value, str):  # `files/respond` reads its id before its own check
            raise InvalidParams(f'"{key}" must be a string', param=key)
        if not is_valid_id(value):
            raise NotFound(f"no such {key.removesuffix('Id')}: {value[:80]!r}", param=key)
        return value

    def obj(self, key: str) -> JsonObject | None:
        """An object param, None if absent."""
        return cast(JsonObject | None, self._get(key, False))  # checked at the edge
